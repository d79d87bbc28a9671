/** One step of a backend's schema history; versions only grow, applied steps are never edited. */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
