import { auditSnapshot, decodeAuditCursor } from './audit-log.service.js';

describe('audit log', () => {
  it('keeps no key hash, secret or literal tool header in a snapshot', () => {
    const snapshot = auditSnapshot({
      id: 'k1',
      keyHash: 'a'.repeat(64),
      secret: 'swb_x',
      createdAt: new Date('2026-01-02T03:04:05.000Z'),
      config: { headers: { 'x-token': 'literal', 'x-env': { fromEnv: 'TOKEN' } }, url: 'https://x' },
      missing: undefined,
    });
    expect(snapshot).toEqual({
      id: 'k1',
      createdAt: '2026-01-02T03:04:05.000Z',
      config: { headers: { 'x-token': '[redacted]', 'x-env': { fromEnv: 'TOKEN' } }, url: 'https://x' },
    });
  });

  it('reads back only cursors of its own shape', () => {
    const cursor = Buffer.from('2026-01-02 03:04:05.123456+00|0f8b6c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f').toString(
      'base64url',
    );
    expect(decodeAuditCursor(cursor)).toEqual({
      createdAt: '2026-01-02 03:04:05.123456+00',
      id: '0f8b6c2e-1a2b-4c3d-8e9f-0a1b2c3d4e5f',
    });
    expect(decodeAuditCursor('nonsense')).toBeNull();
    expect(decodeAuditCursor(Buffer.from('x|y|z').toString('base64url'))).toBeNull();
    expect(decodeAuditCursor(Buffer.from('2026-01-02|not-a-uuid').toString('base64url'))).toBeNull();
  });
});
