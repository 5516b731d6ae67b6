import { z } from 'zod';

/**
 * Building blocks of the operator's environment schema (src/config/operator-env.ts). Every variable is
 * declared once, with its type, its default and a one-line description; `npm run settings-doc` turns the
 * descriptions into the settings table of docs/configuration.md.
 */

/** What the settings table shows for a variable besides its description. */
export interface SettingMeta {
  description: string;
  /** The default as the table shows it, when the schema's own default is computed or not a plain value. */
  shown?: string;
  /** A ceiling: a repository's `.github/repgen.yml` or a `/repgen` flag may lower it, never raise it. */
  ceiling?: boolean;
}

/** Attaches the table's metadata to a variable's schema (zod's global registry keeps it). */
export function doc<S extends z.ZodType>(schema: S, meta: SettingMeta): S {
  return schema.meta(meta as unknown as Record<string, unknown>);
}

export const posInt = () => z.coerce.number().int().positive();
export const intMin = (min: number) => z.coerce.number().int().min(min);
export const intRange = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

/** `1/true/yes` and `0/false/no`. */
export const flag = () => z.enum(['1', '0', 'true', 'false', 'yes', 'no']).transform((v) => ['1', 'true', 'yes'].includes(v));

/** A JSON-valued variable: parsed, then validated by `schema`. */
export function jsonSetting<T extends z.ZodType>(schema: T) {
  return z
    .string()
    .transform((raw, ctx) => {
      try {
        return JSON.parse(raw) as unknown;
      } catch {
        ctx.addIssue({ code: 'custom', message: 'is not valid JSON' });
        return z.NEVER;
      }
    })
    .pipe(schema);
}

/** Drops unset and empty variables: `FOO= repgen …` is a common way to switch one off. */
export function setVariables(env: NodeJS.ProcessEnv): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined && e[1] !== ''));
}
