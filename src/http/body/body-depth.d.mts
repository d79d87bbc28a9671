/** Where a parsed JSON body nests deeper than `maxDepth`, as a path (`messages[0].content`), or null. */
export function tooDeepAt(body: unknown, maxDepth: number): string | null;
