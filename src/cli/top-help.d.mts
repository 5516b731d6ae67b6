export declare const SUMMARIES: Record<'run' | 'context' | 'reproduce' | 'bench' | 'serve' | 'worker' | 'k8s', string>;
export declare function topHelp(): string;
export declare function version(): string;
