/** One change a model reply asks for: a search/replace or diff hunk, a new file, or a whole file rewritten. */
export type Edit =
  | {
      kind: 'replace';
      path: string;
      search: string;
      replace: string;
      format: 'search-replace' | 'unified-diff';
      /** 1-based line the diff hunk claimed, a hint only */
      lineHint?: number;
    }
  | { kind: 'create'; path: string; content: string; format: 'search-replace' | 'unified-diff' }
  | { kind: 'whole-file'; path: string; content: string };
