import type { z } from 'zod';
import { ContextEnv } from '../config/env/context-env.js';
import { parseEnv } from '../config/operator-env.js';

/**
 * Settings of the context builder, read from the environment: declared once, in the operator's environment
 * schema (src/config/env/context-env.ts). Each one also goes into the cache key (see `settingsFingerprint`).
 */
export const ContextSettings = ContextEnv;
export type ContextSettings = z.infer<typeof ContextSettings>;

/** Reads the context builder's settings; a bad value is a SetupError naming the variable. */
export function readContextSettings(env: NodeJS.ProcessEnv = process.env): ContextSettings {
  return parseEnv(ContextEnv, env, (name, message) => `bad context setting ${name}: ${message}`);
}
