import { describe, expect, it } from 'vitest';
import { analyzePython } from '../../src/complete/scope.js';
import { bindingEnd, descendants, isTarget } from '../../src/complete/syntax-walk.js';

describe('where a binding takes effect in a statement', () => {
  it('after the right side of an assignment, after the target of a for, never for a name it does not bind', async () => {
    const src = 'for i in range(2):\n    loss = loss(i)\n';
    const a = await analyzePython(src);
    const st = a.statements[0]!;
    expect(bindingEnd(st, 'loss')).toBe(src.indexOf('loss(i)') + 'loss(i)'.length);
    expect(bindingEnd(st, 'i')).toBe(src.indexOf('i in') + 1);
    expect(bindingEnd(st, 'other')).toBe(Number.POSITIVE_INFINITY);
    a.tree.delete();
  });

  it('tells the targets of an assignment or loop from reads', async () => {
    const a = await analyzePython('a, (b, c) = f(d)\nfor x in y:\n    pass\n');
    const ids = [...descendants(a.tree.rootNode)].filter((n) => n.type === 'identifier');
    expect(ids.filter(isTarget).map((n) => n.text)).toEqual(['a', 'b', 'c', 'x']);
    a.tree.delete();
  });
});
