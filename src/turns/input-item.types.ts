/** The turn's input, as parsed from a request and stored in `responses.input`. */

/**
 * One input item as the turn keeps it (stored in `responses.input`). `id` is the client's own
 * item id when it sent one. A message's `parts` are present only when it carries an image or a
 * file; `text` is always the concatenation of its text parts (chat history, title).
 */
export type InputItem =
  | {
      type: 'message';
      role: 'user' | 'assistant' | 'system' | 'developer';
      text: string;
      parts?: InputPart[];
      id?: string;
    }
  | { type: 'function_call_output'; callId: string; output: string; id?: string }
  | { type: 'function_call'; callId: string; name: string; arguments: string; id?: string }
  /** A reasoning item a client sends back with its own history: kept, not shown to the model again. */
  | { type: 'reasoning'; content: string[]; summary: string[]; id?: string }
  /** A compaction item from POST /v1/responses/compact: the model sees its summary. */
  | { type: 'compaction'; encryptedContent: string; summary: string; id?: string };

export type ImageDetail = 'low' | 'high' | 'auto';

/**
 * A content part of a user message. `imageUrl` is an http(s) URL or a `data:image/…;base64,`
 * URL; `fileData` is a `data:<type>;base64,` URL (bare base64 is wrapped at parse time). An
 * `input_file` has exactly one of `fileData`, `fileUrl` and `fileId`.
 */
export type InputPart =
  | { type: 'input_text'; text: string }
  | { type: 'input_image'; imageUrl: string; detail: ImageDetail }
  | {
      type: 'input_file';
      filename: string | null;
      fileData: string | null;
      fileUrl: string | null;
      /** A file of the Files API (`file-…`), as sent; the model gets its extracted text. */
      fileId?: string;
    };
