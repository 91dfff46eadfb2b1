import { embedLocally, LOCAL_EMBEDDING_DIMENSIONS } from './local-embedder.js';

const cosine = (a: Float32Array, b: Float32Array) => a.reduce((sum, value, i) => sum + value * b[i], 0);

describe('embedLocally', () => {
  it('is deterministic, of fixed dimension and unit length', () => {
    const vector = embedLocally('The office opens at nine');
    expect(vector).toHaveLength(LOCAL_EMBEDDING_DIMENSIONS);
    expect(embedLocally('The office opens at nine')).toEqual(vector);
    expect(cosine(vector, vector)).toBeCloseTo(1, 5);
    expect(cosine(embedLocally(''), embedLocally(''))).toBe(0);
  });

  it('puts texts sharing words and inflections closer than unrelated ones', () => {
    const query = embedLocally('when do offices open?');
    const related = embedLocally('The office opens at nine in the morning');
    const unrelated = embedLocally('Parking permits are renewed every January');
    expect(cosine(query, related)).toBeGreaterThan(cosine(query, unrelated) + 0.2);
  });
});
