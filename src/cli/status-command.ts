/** `realty-batch status [<batch>] [--json]`: counts per outcome and per queue state. */
import type { Command } from 'commander';
import { Queue } from 'bullmq';
import { UsageError } from '../errors.js';
import { createBatchStore } from '../outcomes/batches.js';
import { batchOutcomes, emptyCounts } from '../results/write-results.js';
import { connectRedis } from '../queue/connection.js';
import { environment } from './common.js';
import { printCounts } from './print.js';

export function registerStatusCommand(program: Command): void {
  program
    .command('status')
    .description('counts per outcome for a batch, or the recent batches')
    .argument('[batch]', 'batch id')
    .option('--json', 'print one JSON object')
    .action(async (batch: string | undefined, opts) => {
      const env = environment();
      const redis = await connectRedis(env.config.redisUrl, { failFast: true });
      try {
        if (!batch) {
          const ids = await redis.zrevrange(env.keys.batches, 0, 19);
          const store = createBatchStore(redis, env.keys);
          const metas = await Promise.all(ids.map((id) => store.get(id)));
          if (opts.json) console.log(JSON.stringify(metas.filter(Boolean)));
          else for (const m of metas) if (m) console.log(`${m.id}  ${m.createdAt}  rows ${m.total ?? '(loading)'}  ${m.file}`);
          return;
        }
        const meta = await createBatchStore(redis, env.keys).get(batch);
        if (!meta) throw new UsageError(`There is no batch ${batch} in Redis (realty-batch status lists the batches).`);
        const total = meta.total ?? 0;
        const counts = emptyCounts();
        for await (const r of batchOutcomes(redis, env.keys, batch, total)) counts[r.outcome]++;
        const queue = new Queue(env.keys.queueName, { connection: redis, prefix: env.keys.bullPrefix });
        const queueStates = await queue.getJobCounts();
        await queue.close();
        const outcomes = Object.fromEntries(Object.entries(counts).filter(([, n]) => n > 0));
        const done = meta.total !== undefined && counts.pending === 0;
        if (opts.json) console.log(JSON.stringify({ batch, total, outcomes, done, queue: queueStates, createdAt: meta.createdAt }));
        else {
          printCounts(batch, counts);
          console.log(`  done: ${done ? 'yes' : 'no'}; queue (all batches): ${Object.entries(queueStates).map(([s, n]) => `${s} ${n}`).join(', ')}`);
        }
      } finally {
        redis.disconnect();
      }
    });
}
