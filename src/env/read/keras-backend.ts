// The Keras backend a report ran on (issue 39, item 3). Keras 3 declares no framework: it imports the one
// `KERAS_BACKEND` names, TensorFlow when unset. Reports say it in their code (`os.environ["KERAS_BACKEND"] = "torch"`)
// or only in words ("Backend is Torch", "averagePooling2D calculates wrongly with torch backend", "using PyTorch as
// backend"): the env must hold that framework, and its import proof must import Keras on it. Read from the text only,
// never by running it. Pure.

export type KerasBackend = 'tensorflow' | 'jax' | 'torch';

const NAMES: Record<string, KerasBackend> = { tensorflow: 'tensorflow', tf: 'tensorflow', jax: 'jax', torch: 'torch', pytorch: 'torch' };
const WORD = '(tensorflow|tf|jax|pytorch|torch)';
/** `KERAS_BACKEND=torch`, `os.environ["KERAS_BACKEND"] = "jax"`, `"KERAS_BACKEND": "torch"`, `%env KERAS_BACKEND jax`. */
const SET = new RegExp(String.raw`KERAS_BACKEND['"\]]*\s*(?:[=:,]|\s)\s*['"]?${WORD}\b`, 'i');
/** "Backend is Torch", "backend: jax", "backend = torch", "Backend - PyTorch", "backend:torch" (a label pasted). */
const BACKEND_IS = new RegExp(String.raw`\bbackend\s*(?:is\s+|[:=\-]\s*)["'\`]?${WORD}\b`, 'gi');
/** "the torch backend", "with PyTorch as backend", "JAX as the backend", "TensorFlow-backend". */
const AS_BACKEND = new RegExp(String.raw`\b${WORD}(?:\s+as(?:\s+(?:the|its|a))?)?[\s-]+backend\b`, 'gi');

/**
 * The backend the report's Keras ran on: the one its code sets in `KERAS_BACKEND` (a setting wins over words), else
 * the one its title names, else the first its text names as Keras's backend. Null when it names none.
 */
export function reportKerasBackend(title: string, body: string): KerasBackend | null {
  const set = SET.exec(`${title}\n${body}`)?.[1];
  if (set) return NAMES[set.toLowerCase()] ?? null;
  return firstNamed(title) ?? firstNamed(body);
}

function firstNamed(text: string): KerasBackend | null {
  let first: { at: number; name: KerasBackend } | null = null;
  for (const re of [BACKEND_IS, AS_BACKEND])
    for (const m of text.matchAll(re)) {
      const name = NAMES[(m[1] as string).toLowerCase()];
      if (name && (first === null || m.index < first.at)) first = { at: m.index, name };
    }
  return first?.name ?? null;
}

/**
 * The setup variables the env's import proof runs under: the report's own (src/env/prove/report-setup-env.ts), and,
 * where Keras is imported (the project is Keras, or the report's code imports it) and the code sets no backend,
 * `KERAS_BACKEND` as the report's words name it: the reporter's Keras ran on it, set in a shell or `keras.json`.
 */
export function withKerasBackend(
  setupEnv: Record<string, string>,
  report: { title: string; body: string },
  importsKeras: boolean,
): Record<string, string> {
  if (!importsKeras || 'KERAS_BACKEND' in setupEnv) return setupEnv;
  const backend = reportKerasBackend(report.title, report.body);
  return backend ? { ...setupEnv, KERAS_BACKEND: backend } : setupEnv;
}
