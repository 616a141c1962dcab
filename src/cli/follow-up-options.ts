/** The flags every follow-up command (`answer`, `cancel`, `suspend`, `resume`) takes. */
import type { Command } from 'commander';
import { TUNABLES } from '../config.js';
import { nonNegativeInt, positiveInt } from './flags.js';

export interface FollowUpFlags {
  profile?: string;
  timeoutMs: number;
  feedLagMs: number;
  feedWaitMs: number;
  track: boolean;
  concurrency: number;
  operator?: string;
  json?: boolean;
}

export function followUpOptions(command: Command): Command {
  return command
    .option('--profile <bank.json>', "the batch's bank profile, when Redis no longer holds it (emptied or restarted): the same bank's")
    .option('--timeout-ms <ms>', 'per gateway request', positiveInt('--timeout-ms'), 30_000)
    .option(
      '--feed-lag-ms <ms>',
      'how long after a call its docflow may take to show in the news feed: a call whose answer was lost is sent again only once the feed passed its end plus this',
      nonNegativeInt('--feed-lag-ms'),
      TUNABLES.feedLagMs,
    )
    .option(
      '--feed-wait-ms <ms>',
      'how long to wait for the news feed: before a call (it must be known complete) and after the calls (the states shown are its)',
      nonNegativeInt('--feed-wait-ms'),
      30_000,
    )
    .option('--no-track', 'this process never follows the news feed; another process of the fleet (work, run or track) must')
    .option('--concurrency <n>', 'docflows handled at once', positiveInt('--concurrency'), 4)
    .option('--operator <name>', 'who asks, for the audit of operator actions (default: the OS user)')
    .option('--json', 'print the lines as JSON');
}
