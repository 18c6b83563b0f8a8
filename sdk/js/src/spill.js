import { nodeFs } from './platform.js';

// The offline spill file (Node only): events the server could not take, as
// JSON lines with their original event_id and timestamp. The next client on
// the same path claims the file (rename, so two processes never replay the
// same lines), replays events younger than 24 hours and discards older ones.
// The server de-duplicates on event_id, so a replay racing a late success is harmless.

export const REPLAY_WINDOW_MS = 24 * 3600 * 1000;

export class SpillFile {
  constructor(path, logger, replayWindowMs = REPLAY_WINDOW_MS) {
    if (nodeFs === null) throw new Error('expd: spillPath needs node:fs, which this runtime lacks');
    this.path = path;
    this.logger = logger;
    this.replayWindowMs = replayWindowMs;
  }

  /** Append events as JSON lines; false (logged) if the file cannot be written. */
  append(events) {
    const data = events.map((e) => JSON.stringify(e) + '\n').join('');
    try {
      // One write per batch on an append-mode file keeps lines whole across processes.
      nodeFs.appendFileSync(this.path, data, { mode: 0o600 });
      return true;
    } catch (err) {
      this.logger.error(`expd: could not spill ${events.length} events to ${this.path}: ${err.message}`);
      return false;
    }
  }

  /** Claim the file and return its events still inside the replay window. */
  takeReplayable(nowMs = Date.now()) {
    const claimed = `${this.path}.replay-${globalThis.process?.pid ?? 0}-${nowMs}`;
    try {
      nodeFs.renameSync(this.path, claimed);
    } catch (err) {
      if (err.code !== 'ENOENT') this.logger.error(`expd: could not claim spill file ${this.path}: ${err.message}`);
      return [];
    }
    let lines;
    try {
      lines = nodeFs.readFileSync(claimed, 'utf8').split('\n');
    } catch (err) {
      this.logger.error(`expd: could not read spill file ${claimed}: ${err.message}`);
      return [];
    } finally {
      try {
        nodeFs.unlinkSync(claimed);
      } catch {
        // already gone
      }
    }
    const oldest = nowMs - this.replayWindowMs;
    const fresh = [];
    let expired = 0, unreadable = 0;
    for (const line of lines) {
      if (!line.trim()) continue;
      let event, stamp;
      try {
        event = JSON.parse(line);
        stamp = Date.parse(event.timestamp);
      } catch {
        stamp = NaN;
      }
      if (Number.isNaN(stamp)) unreadable++;
      else if (stamp < oldest) expired++;
      else fresh.push(event);
    }
    if (expired) this.logger.warn(`expd: discarded ${expired} spilled events older than 24 hours from ${this.path}`);
    if (unreadable) this.logger.warn(`expd: discarded ${unreadable} unreadable lines from ${this.path}`);
    return fresh;
  }
}
