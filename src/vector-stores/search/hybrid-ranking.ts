/**
 * Reciprocal rank fusion of the vector and the full-text rankings (docs/knowledge.md "Search"):
 * a chunk's score is Σ weight / (K + rank) over the rankings it appears in, divided by the best
 * possible score, so it lies in (0, 1] and a chunk first in both rankings scores 1. Only ranks
 * count: the two searches' raw scores are not comparable, ranks are.
 */
export const RRF_K = 60;

export interface HybridWeights {
  embedding: number;
  text: number;
}

export function fuseRankings(
  vector: string[],
  lexical: string[],
  weights: HybridWeights,
): Array<{ id: string; score: number }> {
  const total = weights.embedding + weights.text;
  if (total <= 0) return [];
  const scores = new Map<string, number>();
  const add = (ids: string[], weight: number) =>
    ids.forEach((id, rank) => scores.set(id, (scores.get(id) ?? 0) + weight / (RRF_K + rank + 1)));
  add(vector, weights.embedding);
  add(lexical, weights.text);
  const best = total / (RRF_K + 1);
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score: score / best }))
    .sort((a, b) => b.score - a.score || a.id.localeCompare(b.id));
}
