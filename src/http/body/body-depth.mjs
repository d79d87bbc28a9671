/**
 * Where a parsed JSON body nests deeper than `maxDepth`, as a path (`messages[0].content`), or
 * null. Walked iteratively, so the check cannot overflow the stack whatever the nesting; shared by
 * the gateway and the thread that parses large bodies (plain JavaScript, for that thread).
 * @param {unknown} body
 * @param {number} maxDepth
 * @returns {string | null}
 */
export function tooDeepAt(body, maxDepth) {
  if (typeof body !== 'object' || body === null) return null;
  // Only containers go on the stack: strings and numbers, most of a body, cost nothing here.
  const stack = [{ value: body, depth: 0, parent: null, key: null }];
  while (stack.length > 0) {
    const frame = stack.pop();
    if (frame.depth >= maxDepth) return pathOf(frame);
    const container = frame.value;
    if (Array.isArray(container)) {
      // By index, not for...in: an array of a million numbers is walked in milliseconds, not a quarter second.
      for (let index = 0; index < container.length; index++) {
        const child = container[index];
        if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: frame.depth + 1, parent: frame, key: index });
      }
      continue;
    }
    for (const key in container) {
      const child = container[key];
      if (typeof child === 'object' && child !== null) stack.push({ value: child, depth: frame.depth + 1, parent: frame, key });
    }
  }
  return null;
}

function pathOf(frame) {
  const keys = [];
  for (let at = frame; at && at.key !== null; at = at.parent) keys.unshift(at.key);
  return keys.reduce((path, key) => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key), '') || 'the body';
}
