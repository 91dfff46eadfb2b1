import type { Redis } from 'ioredis';

/**
 * Sets one replica's count of the calls it runs on a target (KEYS[1], a hash): field `c:<replica>`
 * the count, `e:<replica>` when it lapses (Redis time, ms). A count of 0 removes both. The hash
 * itself expires a lease after its last write, so a target nobody calls any more leaves nothing.
 */
const WRITE_SCRIPT = `
local replica = ARGV[1]
local count = tonumber(ARGV[2])
if count <= 0 then
  redis.call('HDEL', KEYS[1], 'c:' .. replica, 'e:' .. replica)
  return 0
end
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('HSET', KEYS[1], 'c:' .. replica, count, 'e:' .. replica, ms + tonumber(ARGV[3]))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return count
`;

/** The sum of the counts of KEYS[1] whose lease has not lapsed; lapsed ones (a replica gone) are removed. */
const READ_SCRIPT = `
local fields = redis.call('HGETALL', KEYS[1])
if #fields == 0 then return 0 end
local values = {}
for i = 1, #fields, 2 do values[fields[i]] = fields[i + 1] end
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local total = 0
for name, value in pairs(values) do
  if string.sub(name, 1, 2) == 'c:' then
    local replica = string.sub(name, 3)
    if tonumber(values['e:' .. replica] or '0') > ms then
      total = total + tonumber(value)
    else
      redis.call('HDEL', KEYS[1], name, 'e:' .. replica)
    end
  end
end
return total
`;

/**
 * The running-call counts of every replica in Redis (least-busy balancing across replicas): one
 * hash per target, each replica writing its own count with a lease it renews while the count is
 * not zero. A replica that crashed stops renewing, and its count lapses after `leaseMs`. A
 * replica writes its whole count, never a difference, so a write lost while Redis was away is
 * repaired by the next one.
 */
export class RedisBusyStore {
  constructor(
    private readonly redis: Redis,
    /** Key prefix, e.g. `switchboard:busy:`. */
    private readonly prefix: string,
    private readonly replica: string,
    private readonly leaseMs: number,
  ) {}

  /** Every replica's calls running on each target, summed. */
  async read(keys: string[]): Promise<number[]> {
    const pipeline = this.redis.pipeline();
    for (const key of keys) pipeline.eval(READ_SCRIPT, 1, `${this.prefix}${key}`);
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
    return results.map(([, total]) => Number(total ?? 0));
  }

  /** This replica's counts of these targets, with a fresh lease (0 removes a count). */
  async write(counts: Iterable<[key: string, count: number]>): Promise<void> {
    const pipeline = this.redis.pipeline();
    for (const [key, count] of counts) {
      pipeline.eval(WRITE_SCRIPT, 1, `${this.prefix}${key}`, this.replica, count, this.leaseMs);
    }
    const results = (await pipeline.exec()) ?? [];
    for (const [error] of results) if (error) throw error;
  }
}
