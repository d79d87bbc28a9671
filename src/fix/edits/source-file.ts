/** A file the fix agent shows the model: a repository-relative path and its full text. */
export interface SourceFile {
  path: string;
  content: string;
}
