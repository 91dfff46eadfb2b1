import { countTokens } from '../embeddings/token-count.js';
import { AUTO_CHUNKING, chunkText } from './chunking.js';

describe('chunkText', () => {
  const words = (count: number) => Array.from({ length: count }, (_, i) => `w${i}`).join(' ');

  it('keeps a short text whole, and an empty one as no chunk', () => {
    expect(chunkText('one two  three', AUTO_CHUNKING)).toEqual(['one two  three']);
    expect(chunkText(' \n ', AUTO_CHUNKING)).toEqual([]);
  });

  it('cuts at the token budget with the overlap repeated', () => {
    const chunks = chunkText(words(250), { maxChunkSizeTokens: 100, chunkOverlapTokens: 50 });
    expect(chunks).toHaveLength(4);
    expect(chunks[0].split(' ')).toHaveLength(100);
    expect(chunks[1].startsWith('w50 ')).toBe(true);
    expect(chunks[3].startsWith('w150 ')).toBe(true);
    expect(chunks[3].endsWith('w249')).toBe(true);
  });

  it('counts a long run of characters as several tokens', () => {
    expect(countTokens('a'.repeat(20))).toBe(3);
  });
});
