import type { ExceptionInfo, SymptomCategory, SymptomKind } from './types.js';
import { regexLines } from '../regex.js';

/**
 * Maps an exception to the DL symptom taxonomy. Message patterns come first (torch raises most DL errors as
 * RuntimeError, so the class alone says little), then the class. Order matters: an OOM or device-side
 * assert message wins over anything else it mentions.
 */
const MESSAGE_RULES: Array<[SymptomKind, RegExp]> = [
  [
    'out_of_memory',
    /out of memory|can't allocate memory|CUBLAS_STATUS_ALLOC_FAILED|not enough memory|failed to allocate|\bOOM when allocating/i,
  ],
  ['cuda_device_assert', /device-side assert|Assertion `.*` failed|CUDA error: an illegal memory access/i],
  [
    'cuda_unavailable',
    regexLines('i')`
      Torch not compiled with CUDA enabled|Found no NVIDIA driver|no CUDA GPUs are available
      |CUDA driver version is insufficient|torch\.cuda\.is_available\(\) is False|CUDA is not available
      |No CUDA GPUs|cuda runtime error \(100\)
    `,
  ],
  [
    'device_mismatch',
    regexLines('i')`
      Expected all tensors to be on the same device|on (?:different|the same) devices?
      |Expected .* (?:to be on|on) (?:device|cuda|cpu)
      |Input type \(torch\.cuda\.\w+\) and weight type \(torch\.\w+\)
      |Input type \(torch\.\w+\) and weight type \(torch\.cuda\.\w+\)|expected device
      |Expected object of device type|is on (?:cpu|cuda)
    `,
  ],
  ['nan_inf', /returned nan values|\bnan values\b|loss is nan|NaN or Inf found|non-finite loss|contains (?:NaN|Inf)/i],
  [
    'dtype_mismatch',
    regexLines('i')`
      expected scalar type|could not infer output dtype|Expected object of scalar type
      |must have the same dtype|dtype mismatch|Found dtype|result type \w+ can't be cast
      |not implemented for '(?:Long|Int|Half|Float|Double|Bool|Byte|Char|Short|BFloat16|ComplexFloat)'
      |expected (?:\w+ )?dtype|Input type \(\w+\) and (?:weight|bias) type \(\w+\) should be the same
      |only Tensors of floating point(?: and complex)? dtype can require gradients|Expected (?:Float
      |Double|Long|Int|Half)|(?:Float|Double|Long|Half|Int)Tensor.*(?:Float|Double|Long|Half|Int)Tensor
      |argument '\w+' must be \w+, not Tensor
      |Expected tensor for argument #\d+ '\w+' to have (?:one of the following )?scalar types?
    `,
  ],
  [
    'shape_mismatch',
    regexLines('i')`
      shapes? cannot be multiplied|size mismatch|Sizes of tensors must match|must match the size of tensor
      |shape '\[.*\]' is invalid for input of size|Expected input batch_size
      |expected input\[.*\] to have \d+ channels|Given groups=\d+, weight of size|dimension out of range
      |mismatch in shape|shape mismatch|Incompatible shapes|Target size .* must be the same as input size
      |inconsistent tensor size|The size of tensor a \(\d+\) must match|Expected target size
      |non-singleton dimension|Expected \d+D|expected \d+D|too many indices for tensor|cannot be broadcast
      |could not broadcast|operands could not be broadcast|Using a target size|same number of dimensions
      |mat1 dim 1 must match mat2 dim 0|Expected size \d+ but got size \d+|cannot reshape
      |view size is not compatible|doesn't match the broadcast shape|input and target shapes do not match
      |Dimensions? must be equal|expected (?:input|target) .* to have (?:the )?(?:same )?(?:size|shape)
      |Kernel size can't be greater than actual input size|Calculated (?:padded )?input size per channel
      |Matrix size-incompatible|is incompatible with the layer|expected axis -?\d+ of input shape to have value
      |Input to reshape is a tensor with|Shapes? \(.*\) and \(.*\) are incompatible|incompatible shapes for
      |dot_general requires contracting dimensions to have the same shape|must have the same shape
    `,
  ],
  ['import_error', /No module named|cannot import name|DLL load failed|undefined symbol/i],
  [
    'api_error',
    /has no attribute|unexpected keyword argument|is deprecated|has been removed|no longer supported|is not supported in this version/i,
  ],
];

const CLASS_RULES: Array<[SymptomKind, RegExp]> = [
  ['out_of_memory', /^(OutOfMemoryError|MemoryError)$/],
  ['import_error', /^(ModuleNotFoundError|ImportError)$/],
  ['api_error', /^(AttributeError|NotImplementedError|DeprecationWarning|FutureWarning)$/],
  ['value_error', /^(ValueError|InvalidArgumentError)$/],
  // TensorFlow's status classes and JAX's tracer errors (TypeError subclasses: a traced value used as a concrete one)
  ['out_of_memory', /^ResourceExhaustedError$/],
  ['index_error', /^OutOfRangeError$/],
  ['api_error', /^(UnimplementedError|FailedPreconditionError)$/],
  [
    'type_error',
    /^(ConcretizationTypeError|Tracer(?:Bool|Array|Integer)ConversionError|UnexpectedTracerError|NonConcreteBooleanIndexError)$/,
  ],
  ['index_error', /^IndexError$/],
  ['key_error', /^KeyError$/],
  ['type_error', /^TypeError$/],
];

/** The symptom kind of an exception (class without module prefix plus message). */
export function classifyException(e: ExceptionInfo): SymptomKind {
  const type = e.type.split('.').at(-1) ?? e.type;
  // Import errors say "No module named" and AttributeErrors "has no attribute": the class decides those
  // first, so that an ImportError mentioning a shape is still an import problem.
  if (/^(ModuleNotFoundError|ImportError)$/.test(type)) return 'import_error';
  const text = `${e.message}`;
  for (const [kind, re] of MESSAGE_RULES) if (re.test(text)) return kind;
  for (const [kind, re] of CLASS_RULES) if (re.test(type)) return kind;
  return 'other_crash';
}

const CATEGORY: Record<SymptomKind, SymptomCategory> = {
  shape_mismatch: 'crash',
  dtype_mismatch: 'crash',
  device_mismatch: 'crash',
  cuda_unavailable: 'crash',
  out_of_memory: 'crash',
  import_error: 'crash',
  api_error: 'crash',
  value_error: 'crash',
  index_error: 'crash',
  type_error: 'crash',
  key_error: 'crash',
  cuda_device_assert: 'crash',
  other_crash: 'crash',
  nan_inf: 'silent',
  loss_not_decreasing: 'silent',
  loss_diverging: 'silent',
  accuracy_at_chance: 'silent',
  accuracy_stuck: 'silent',
  constant_predictions: 'silent',
  exploding_gradients: 'silent',
  vanishing_gradients: 'silent',
  wrong_values: 'silent',
  slow_step: 'performance',
  memory_growth: 'performance',
  timeout: 'hang',
};

/** The taxonomy's category of a kind (an exception-derived symptom is always a crash, whatever its kind). */
export function categoryOf(kind: SymptomKind): SymptomCategory {
  return CATEGORY[kind];
}
