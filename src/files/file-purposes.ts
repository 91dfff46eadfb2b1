/**
 * The purposes OpenAI's Files API accepts, all stored as OpenAI stores them; this service acts on
 * `assistants` and `user_data` (file_search, `input_file`) and keeps the others for clients that
 * upload them anyway (docs/knowledge.md "Purposes").
 */
export const FILE_PURPOSES = ['assistants', 'user_data', 'batch', 'fine-tune', 'vision', 'evals'] as const;
export type FilePurpose = (typeof FILE_PURPOSES)[number];

/** A file of this purpose belongs to the end user (`x-user-id`) who uploaded it; others to the organization. */
export const USER_SCOPED_PURPOSE: FilePurpose = 'user_data';
