export declare const BUILT_FROM: string[];
export declare const STAMP: string;
export declare function newestSource(root: string, paths?: string[]): { path: string | null; mtimeMs: number };
export declare function compiledState(root: string): { fresh: true } | { fresh: false; reason: string };
