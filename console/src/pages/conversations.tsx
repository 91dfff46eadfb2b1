import { useState } from 'preact/hooks';
import { ApiFailure, get } from '../api';
import type { Organization } from '../main';
import type { Session } from '../session';
import { Empty, ErrorNote, Field, Page, formatDate } from '../ui';
import { UserErasure } from './user-erasure';

interface Conversation {
  id: string;
  title: string;
  isActive: boolean;
  updatedAt: string;
  assistantId: string | null;
}

interface Message {
  id: string;
  role: 'user' | 'assistant';
  content: string;
  createdAt: string;
}

/**
 * A user's chat history and a response's full record, for support staff. These are the public
 * API's user routes (GET /v1/chat/history/conversations, GET /v1/responses/{id}, `x-user-id`),
 * so they need an API key of this organization that also carries the `user` scope; an admin-only
 * key or a platform token is refused by the API, and the page says so.
 */
export function ConversationsPage({ org, session }: { org: Organization; session: Session }) {
  const [userId, setUserId] = useState('');
  const [conversations, setConversations] = useState<Conversation[] | null>(null);
  const [messages, setMessages] = useState<{ id: string; items: Message[] } | null>(null);
  const [responseId, setResponseId] = useState('');
  const [record, setRecord] = useState<unknown>(null);
  const [error, setError] = useState<unknown>(null);
  const as = () => ({ 'x-user-id': userId.trim() });
  const guard = async (run: () => Promise<void>) => {
    setError(null);
    try {
      await run();
    } catch (failure) {
      setError(
        failure instanceof ApiFailure && failure.status === 403
          ? new Error(
              'This credential may not read conversations: it needs an API key with the "user" scope too.',
            )
          : failure,
      );
    }
  };
  const search = (event: Event) => {
    event.preventDefault();
    setMessages(null);
    void guard(async () =>
      setConversations(await get<Conversation[]>('/v1/chat/history/conversations', {}, as())),
    );
  };
  const open = (id: string) =>
    guard(async () => {
      const items = await get<Message[]>(
        `/v1/chat/history/conversations/${encodeURIComponent(id)}/messages`,
        {},
        as(),
      );
      setMessages({ id, items });
    });
  const lookup = (event: Event) => {
    event.preventDefault();
    void guard(async () =>
      setRecord(await get(`/v1/responses/${encodeURIComponent(responseId.trim())}`, {}, as())),
    );
  };
  return (
    <Page title={`Conversations of ${org.name}`}>
      {session.role === 'platform' ? (
        <p class="muted">Conversations are read with an organization&apos;s key that has the user scope.</p>
      ) : null}
      <form class="panel filters" onSubmit={search} aria-label="Find a user's conversations">
        <Field id="conv-user" label="End user id (x-user-id)">
          <input id="conv-user" required value={userId} onInput={(e) => setUserId(e.currentTarget.value)} />
        </Field>
        <button type="submit">Show history</button>
      </form>
      <ErrorNote error={error} />
      <Empty when={conversations?.length === 0}>No conversations for this user.</Empty>
      {conversations?.length ? (
        <table data-testid="conversations-table">
          <caption class="sr-only">Conversations</caption>
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Assistant</th>
              <th scope="col">Updated</th>
              <th scope="col">
                <span class="sr-only">Open</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {conversations.map((conversation) => (
              <tr key={conversation.id}>
                <td>{conversation.title}</td>
                <td>
                  <code>{conversation.assistantId ?? '—'}</code>
                </td>
                <td>{formatDate(conversation.updatedAt)}</td>
                <td>
                  <button type="button" class="secondary" onClick={() => void open(conversation.id)}>
                    Messages<span class="sr-only"> of {conversation.title}</span>
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : null}
      {messages !== null ? (
        <section class="panel" aria-label="Messages">
          <h2>Messages</h2>
          <ol class="messages">
            {messages.items.map((message) => (
              <li key={message.id}>
                <strong>{message.role}</strong> <span class="muted">{formatDate(message.createdAt)}</span>
                <pre>{message.content}</pre>
              </li>
            ))}
          </ol>
        </section>
      ) : null}
      <form class="panel filters" onSubmit={lookup} aria-label="Look up a response">
        <Field id="conv-response" label="Response id (resp_…)">
          <input
            id="conv-response"
            required
            value={responseId}
            onInput={(e) => setResponseId(e.currentTarget.value)}
          />
        </Field>
        <button type="submit">Show record</button>
      </form>
      {record !== null ? (
        <section class="panel" aria-label="Response record">
          <h2>Response record</h2>
          <pre data-testid="response-record">{JSON.stringify(record, null, 2)}</pre>
        </section>
      ) : null}
      <UserErasure
        org={org}
        userId={userId}
        onErased={() => {
          setConversations(null);
          setMessages(null);
          setRecord(null);
        }}
      />
    </Page>
  );
}
