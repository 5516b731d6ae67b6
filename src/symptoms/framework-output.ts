/**
 * What TensorFlow, Keras and JAX print around the error a reader wants (issue 29): start-up noise that is the same
 * on every run, and exceptions whose first line is only a wrapper ("Graph execution error:", "Exception encountered
 * when calling Sequential.call()."), the original message coming after the op's creation trace. Pure.
 */

/**
 * Lines a framework prints on every start, whatever the script does: oneDNN and CPU-feature notices, the
 * absl log preamble, CUDA/TensorRT/cuDNN probing on a machine without a GPU, the XLA service lines. They are kept
 * out of the evidence excerpt and out of the line comparison (a report pasted on a GPU machine has other ones).
 */
const NOISE: RegExp[] = [
  // glog/absl prefixes: `2024-01-05 10:11:12.345678: I tensorflow/…cc:113] …` and `I0000 00:00:1796277123.356 13854 port.cc:153] …`
  /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d+: [IWE] (?:tensorflow|external|third_party|xla)\/\S+:\d+\] /,
  // `I0000 00:00:1796277123.356348   13854 port.cc:153] oneDNN custom operations are on…`
  new RegExp(
    String.raw`^[IWE]\d{4} \d\d:\d\d:[\d.]+\s+\d+ \S+\.cc:\d+\] ` +
      String.raw`(?:oneDNN|This TensorFlow binary|Unable to register|failed call to cuInit|TF-TRT|XLA service|\s*StreamExecutor` +
      String.raw`|Could not find|cuda_|Local rendezvous is aborting|Using CPU|disabling MLIR|Created device)`,
  ),
  /^WARNING: All log messages before absl::InitializeLog\(\) is called are written to STDERR$/,
  /^To enable the following instructions: .* in other operations, rebuild TensorFlow with the appropriate compiler flags\.$/,
  /^Could not find cuda drivers on your machine, GPU will not be used\.$/,
  /^An NVIDIA GPU may be present on this machine, but a CUDA-enabled jaxlib is not installed\. Falling back to cpu\.$/,
  /^Platform 'cuda' is experimental and not all JAX functionality may be correctly supported!$/,
];

/** Whether a line is a framework's start-up or probing noise. */
export function isFrameworkNoise(line: string): boolean {
  if (line.length > 2000) return false;
  const l = line.trimEnd();
  return NOISE.some((re) => re.test(l));
}

/** Terminal colour and style codes (Keras prints its errors in bold): never part of a message. */
const ANSI = /\x1b\[[0-9;]*[A-Za-z]/g;

/**
 * The output without terminal style codes and without framework noise lines (everything else kept in order, line
 * endings as they were).
 */
export function dropFrameworkNoise(raw: string): string {
  const text = raw.includes('\x1b[') ? raw.replace(ANSI, '') : raw;
  if (!/tensorflow|absl::|oneDNN|jaxlib|\.cc:\d+\]/.test(text)) return text;
  return text
    .split('\n')
    .filter((l) => !isFrameworkNoise(l.replace(/\r$/, '')))
    .join('\n');
}

/** First lines of an exception that only announce another message further down. */
const WRAPPER = /^(?:Graph execution error:?|Exception encountered when calling [\w.]+\(\)\.|Exception encountered when calling layer .*)$/;
/** The creation trace TF prints between the wrapper and the message. */
const TRACE_LINE = /^\s*(?:Detected at node .* defined at \(most recent call last\):|File ".*", line \d+, in .+|\s+\S.*)$/;
/** TF's op-location prefix (`{{function_node __wrapped__MatMul_device_/job:localhost/…/device:CPU:0}} `). */
const FUNCTION_NODE = /^\{\{function_node [^}]*\}\}\s*/;

/** Keras 2's autograph wrapper: `ValueError: in user code:`, the frames indented below it, the original error last. */
const IN_USER_CODE = /^in user code:$/;
/** An indented exception line inside such a block: `    ValueError: Input 0 of layer "sequential" is incompatible …`. */
const INNER_ERROR = /^\s+(?:[A-Za-z_][\w.]*\.)?([A-Z]\w*(?:Error|Exception)):\s+(\S.*)$/;

/** Whether an exception's first line only announces the real message further down (or elsewhere in a report). */
export function isWrapperMessage(message: string): boolean {
  const first = (message.split('\n')[0] ?? '').trim();
  return WRAPPER.test(first) || IN_USER_CODE.test(first);
}

/**
 * The original error of an `in user code:` block: the last indented exception line before the block ends (a line
 * that is neither blank nor indented). Null when the block shows none (a trace cut short).
 */
function innerUserCodeError(following: readonly string[]): string | null {
  let inner: string | null = null;
  for (const raw of following.slice(0, 400)) {
    const line = raw.replace(/\r$/, '');
    if (line.trim() !== '' && !/^\s/.test(line)) break;
    const m = INNER_ERROR.exec(line);
    if (m) inner = (m[2] ?? '').trim();
  }
  return inner;
}

/**
 * The message a reader compares: TF's `{{function_node …}}` prefix dropped, and a wrapper line replaced by the
 * original message found after it (the first paragraph that is not the op's creation trace), with the failing node;
 * Keras's `in user code:` by the original error's message alone (its class is the wrapper's).
 * `following`: the output lines after the exception line. Returns the message unchanged when it is no wrapper.
 */
export function unwrapFrameworkMessage(message: string, following: readonly string[]): string {
  const first = (message.split('\n')[0] ?? '').trim();
  const cleaned = message.replace(FUNCTION_NODE, '');
  if (IN_USER_CODE.test(first)) return innerUserCodeError(following) ?? cleaned;
  if (!WRAPPER.test(first)) return cleaned;
  const found: string[] = [];
  for (const raw of following.slice(0, 400)) {
    const line = raw.replace(/\r$/, '');
    if (found.length === 0) {
      if (line.trim() === '' || TRACE_LINE.test(line)) continue;
      if (/^(?:Traceback \(most recent call last\)|Arguments received by)/.test(line.trim())) break;
      found.push(line.trim());
      continue;
    }
    // The paragraph goes on until a blank line; TF's `[[{{node …}}]]` line names the op that failed.
    if (line.trim() === '' || /^Arguments received by/.test(line.trim())) break;
    found.push(line.trim());
    if (found.length >= 6) break;
  }
  return found.length > 0 ? `${first}\n${found.join('\n')}` : cleaned;
}
