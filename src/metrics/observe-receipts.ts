import type { ReceiptRecord } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';

/**
 * The store, telling `observe` of every receipt once it is written (chat requests and fix runs
 * alike). Told after the answer's last bytes left: a receipt is written before them (a client
 * that has its answer finds it), its metrics and log line need not make the client wait.
 */
export function observeReceipts(store: Store, observe: (receipt: ReceiptRecord) => void): Store {
  return {
    ...store,
    async recordReceipt(receipt) {
      await store.recordReceipt(receipt);
      setImmediate(observe, receipt);
    },
    async finishFixRun(runId, status, result, at, receipt) {
      const ended = await store.finishFixRun(runId, status, result, at, receipt);
      if (ended) setImmediate(observe, receipt);
      return ended;
    },
  };
}
