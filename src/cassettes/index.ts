export * from './schema.js';
export * from './hash.js';
export { recordSession, writeCassette, cassetteOutcome, type SessionRecorder } from './record.js';
export { replayCassette, replaySettings, describeRequestDrift, type CassetteReplay, type Drift } from './replay.js';
