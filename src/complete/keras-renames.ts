// Stack Overflow's Keras reports from 2016-2018 are written against Keras 1, whose argument names Keras 2 renamed
// (and later removed): run as pasted on any Keras a machine installs today they stop at a TypeError about the old
// name ("Keyword argument not understood: 'border_mode'") before reaching the reported bug. The renames are
// Keras' own (its 2.0 release notes and its legacy interface tables), applied only to Keras code. Pure.

/** Keras 1 keyword → Keras 2 keyword, for any call. */
const ANY_CALL: Record<string, string> = {
  border_mode: 'padding',
  nb_epoch: 'epochs',
  subsample: 'strides',
  output_dim: 'units',
  nb_filter: 'filters',
  W_regularizer: 'kernel_regularizer',
  b_regularizer: 'bias_regularizer',
  W_constraint: 'kernel_constraint',
  b_constraint: 'bias_constraint',
  dropout_W: 'dropout',
  dropout_U: 'recurrent_dropout',
  samples_per_epoch: 'steps_per_epoch',
  nb_val_samples: 'validation_steps',
};

/** `init=` was every layer's initializer; elsewhere (`Model(init=…)` of a user's class) it is left alone. */
const LAYER_CALL = /\b(?:Dense|Conv[123]D|Convolution[123]D|LSTM|GRU|SimpleRNN|Embedding|Conv2DTranspose|SeparableConv2D)\(/;

export function keras1To2(code: string): { code: string; edits: string[] } {
  // Keras code: it imports Keras or TensorFlow, or builds and compiles a model the Keras way (snippets often paste no imports).
  if (!/\bkeras\b|^\s*import tensorflow|\bSequential\(|\.compile\(\s*(?:optimizer|loss)\s*=/m.test(code)) return { code, edits: [] };
  const renamed = new Set<string>();
  const lines = code.split('\n').map((line) => {
    if (/^\s*#/.test(line)) return line;
    let out = line.replace(/([(,]\s*)([A-Za-z_]\w*)(\s*=(?!=))/g, (m, pre: string, name: string, eq: string) => {
      const to = ANY_CALL[name] ?? (name === 'init' && LAYER_CALL.test(line) ? 'kernel_initializer' : undefined);
      if (!to) return m;
      renamed.add(`\`${name}=\` → \`${to}=\``);
      return `${pre}${to}${eq}`;
    });
    // `Convolution2D(32, 3, 3, …)`: Keras 1's filters, rows, columns; Keras 2's `Conv2D(32, (3, 3), …)`.
    out = out.replace(/\bConvolution2D\(\s*(\w+)\s*,\s*(\d+)\s*,\s*(\d+)\s*(?=[,)])/g, (_m, f: string, r: string, c: string) => {
      renamed.add('`Convolution2D(f, r, c` → `Conv2D(f, (r, c)`');
      return `Conv2D(${f}, (${r}, ${c})`;
    });
    return out;
  });
  if (!renamed.size) return { code, edits: [] };
  const conv = [...renamed].some((r) => r.startsWith('`Convolution2D'));
  const header = conv && !/\bConv2D\b/.test(code) ? ensureConv2DImport(lines) : lines;
  return { code: header.join('\n'), edits: [`renamed Keras 1 arguments for Keras 2 (${[...renamed].join(', ')})`] };
}

/** `from keras.layers import Convolution2D` gains `Conv2D` beside it, so the renamed call resolves. */
function ensureConv2DImport(lines: string[]): string[] {
  return lines.map((l) =>
    /^\s*from\s+[\w.]*keras[\w.]*\s+import\b.*\bConvolution2D\b/.test(l) ? l.replace(/\bConvolution2D\b/, 'Convolution2D, Conv2D') : l,
  );
}
