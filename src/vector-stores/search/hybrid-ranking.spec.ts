import { fuseRankings } from './hybrid-ranking.js';

describe('fuseRankings', () => {
  it('puts a chunk both rankings agree on first, scored 1', () => {
    const fused = fuseRankings(['a', 'b', 'c'], ['a', 'c'], { embedding: 1, text: 1 });
    expect(fused[0]).toEqual({ id: 'a', score: 1 });
    expect(fused.map((hit) => hit.id)).toEqual(['a', 'c', 'b']);
  });

  it('follows one ranking alone when the other weighs nothing', () => {
    const fused = fuseRankings(['a', 'b'], ['b', 'a'], { embedding: 0, text: 1 });
    expect(fused.map((hit) => hit.id)).toEqual(['b', 'a']);
    expect(fuseRankings(['a'], ['a'], { embedding: 0, text: 0 })).toEqual([]);
  });
});
