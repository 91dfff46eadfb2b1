/** A chat-history message as both statements write it. */
interface MessageRow {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  position: number;
  createdAt: Date;
}

/**
 * SQL shared by the two statements that write a turn (its start and its end). Parameters:
 * $1 conversation id, $2 organization, $3 assistant, $4 user, $5 title of a new conversation,
 * $6 response id, $7 created at, $8 updated at.
 */
export const CONVERSATION_CTE = `conversation AS (
  INSERT INTO conversations (id, organization_id, assistant_id, user_id, title, last_response_id, created_at, updated_at)
  VALUES ($1::uuid, $2::uuid, $3::uuid, $4::varchar, $5::varchar, $6::uuid, $7::timestamptz, $8::timestamptz)
  ON CONFLICT (id) DO UPDATE
     SET updated_at = EXCLUDED.updated_at, last_response_id = EXCLUDED.last_response_id,
         -- A conversation created through the Conversations API takes its first assistant and title here.
         assistant_id = COALESCE(conversations.assistant_id, EXCLUDED.assistant_id),
         title = CASE WHEN conversations.title = '' THEN EXCLUDED.title ELSE conversations.title END
   WHERE conversations.organization_id = EXCLUDED.organization_id
  RETURNING id
)`;

/** Inserts the chat-history messages (JSON array in `$<param>`) of the row of the CTE `response`. */
export function insertMessages(param: number): string {
  return `INSERT INTO messages (id, organization_id, conversation_id, response_id, user_id, role, content, position, created_at)
  SELECT m.id, $2::uuid, response.conversation_id, response.id, $4::varchar, m.role, m.content, m.position, m.created_at
    FROM response, jsonb_to_recordset($${param}::jsonb) AS m(id uuid, role varchar, content text, position smallint, created_at timestamptz)`;
}

/** The parameters $1 to $8 of CONVERSATION_CTE. */
export function conversationParams(
  turn: {
    conversationId: string;
    organizationId: string;
    assistantId: string;
    userId: string | null;
    newConversationTitle: string | null;
    responseId: string;
    createdAt: Date;
  },
  updatedAt: Date,
): unknown[] {
  return [
    turn.conversationId,
    turn.organizationId,
    turn.assistantId,
    turn.userId,
    turn.newConversationTitle ?? '',
    turn.responseId,
    turn.createdAt,
    updatedAt,
  ];
}

/** The messages parameter of `insertMessages`. */
export function messagesParam(messages: MessageRow[]): string {
  return JSON.stringify(messages.map(({ createdAt, ...message }) => ({ ...message, created_at: createdAt })));
}
