import type { Role, TargetKind } from './infer.js';

/** Python that defines a name of a given role. `model` is the variable holding the model, when known. */
export interface Definition {
  name: string;
  /** Lines without the mark. */
  lines: string[];
  /** Helpers (by id) the lines call. */
  helpers: ('example_input' | 'targets' | 'types' | 'output' | 'targets_like' | 'numpy')[];
  why: string;
  /** Other ways to define it, each a candidate of its own after the first (`X` as float64 data, then float32). */
  variants?: { label: string; lines: string[] }[];
}

/** What a definition is shaped by: the model's variable, the optimizer's, how labels are read, the batch size. */
export interface SynthesisContext {
  model: string | null;
  optimizer: string | null;
  floatFromLabels: boolean;
  outFeatures: number;
  batch: number;
}

/** Rows of synthetic data: enough for a few batches, small enough for a CPU. */
export const DATA_ROWS = 64;

function lossFor(target: TargetKind, fromIntLabels: boolean): string {
  if (target === 'class') return 'nn.CrossEntropyLoss()';
  return fromIntLabels ? 'nn.BCEWithLogitsLoss()' : 'nn.MSELoss()';
}

/**
 * The definition of one role. Returns null for roles that need no definition here (imports are the header's)
 * or cannot be synthesised (`unknown`).
 */
export function defineRole(name: string, role: Role, ctx: SynthesisContext): Definition | null {
  switch (role.kind) {
    case 'value':
      return { name, lines: [`${name} = ${role.expr}`], helpers: [], why: role.why };
    case 'module_stub':
      return {
        name,
        lines: [
          `class ${name}(nn.Module):`,
          `    """Stand-in for a layer the report uses but does not show: passes its input through."""`,
          '    def __init__(self, *args, **kwargs):',
          '        super().__init__()',
          '    def forward(self, x, *args, **kwargs):',
          '        return x',
        ],
        helpers: [],
        why: role.why,
      };
    case 'module_fn':
      return {
        name,
        lines: [
          `def ${name}(m):`,
          `    """Stand-in for a function the report passes to Module.apply but does not show."""`,
          '    return None',
        ],
        helpers: [],
        why: role.why,
      };
    case 'namespace':
      return {
        name,
        lines: [`${name} = types.SimpleNamespace(${role.attrs.map((a) => `${a}=100`).join(', ')})`],
        helpers: ['types'],
        why: role.why,
      };
    case 'model':
      return {
        name,
        lines: [`${name} = nn.Sequential(nn.Flatten(), nn.LazyLinear(${ctx.outFeatures}))`],
        helpers: [],
        why: `${role.why}; the report does not show it, so a stand-in linear model takes its place`,
      };
    case 'optimizer':
      if (!ctx.model) return null;
      return {
        name,
        lines: [`${name} = torch.optim.SGD(${ctx.model}.parameters(), lr=0.01)`],
        helpers: [],
        why: `${role.why}: an optimizer over the model's parameters`,
      };
    case 'scheduler':
      if (!ctx.optimizer) return null;
      return { name, lines: [`${name} = torch.optim.lr_scheduler.StepLR(${ctx.optimizer}, step_size=7)`], helpers: [], why: role.why };
    case 'criterion':
      return {
        name,
        lines: [`${name} = ${lossFor(role.target, ctx.floatFromLabels)}`],
        helpers: [],
        why: `${role.why}; ${role.target === 'class' ? 'targets are class ids' : 'targets are floats'}`,
      };
    case 'loader': {
      if (!ctx.model) return null;
      const x = `${name}_x`;
      const lines = [`${x} = repgen_example_input(${ctx.model}, batch=${DATA_ROWS})`];
      if (role.arity >= 2) {
        lines.push(`${name}_y = repgen_targets(${ctx.model}, ${x}, '${role.target}')`);
        lines.push(`${name} = DataLoader(TensorDataset(${x}, ${name}_y), batch_size=${ctx.batch})`);
      } else lines.push(`${name} = DataLoader(TensorDataset(${x}), batch_size=${ctx.batch})`);
      return {
        name,
        lines,
        helpers: ['example_input', 'targets'],
        why: `${role.why}; synthetic ${role.target === 'class' ? 'inputs and class-id targets' : 'inputs and targets'} shaped by the model's first layer`,
      };
    }
    case 'input':
      if (!ctx.model) return null;
      return {
        name,
        lines: [`${name} = repgen_example_input(${ctx.model}, batch=100)`],
        helpers: ['example_input'],
        why: `${role.why}: a synthetic input shaped by the model's first layer`,
      };
    case 'target':
      if (!ctx.model) return null;
      return {
        name,
        lines: [`${name} = repgen_targets(${ctx.model}, repgen_example_input(${ctx.model}, batch=100), '${role.target}')`],
        helpers: ['example_input', 'targets'],
        why: `${role.why}: synthetic ${role.target === 'class' ? 'class ids' : 'values'} shaped by the model's output`,
      };
    default:
      return null;
  }
}
