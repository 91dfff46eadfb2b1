/**
 * The compaction item's `encrypted_content`: the summary, base64url-encoded JSON. Opaque to
 * clients by contract but not secret: it holds only what the caller could already read.
 */
export function sealSummary(summary: string): string {
  return Buffer.from(JSON.stringify({ v: 1, summary }), 'utf8').toString('base64url');
}

/** The summary inside a compaction item, or null when it is not one this service wrote. */
export function openSummary(sealed: string): string | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(sealed, 'base64url').toString('utf8'));
    if (
      typeof parsed === 'object' &&
      parsed !== null &&
      'summary' in parsed &&
      typeof parsed.summary === 'string'
    ) {
      return parsed.summary;
    }
  } catch {
    // not JSON: not ours
  }
  return null;
}
