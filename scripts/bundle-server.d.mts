/** Bundles the given entry points, the threads' entries and serving-heap into `out` (inside the checkout). */
export function bundleServer(out: string, entryPoints: Record<string, string>): Promise<void>;
