import type { ReceiptRecord } from '../storage/records.ts';
import type { Store } from '../storage/store.ts';

/** The store, telling `observe` of every receipt once it is written (chat requests and fix runs alike). */
export function observeReceipts(store: Store, observe: (receipt: ReceiptRecord) => void): Store {
  return {
    ...store,
    async recordReceipt(receipt) {
      await store.recordReceipt(receipt);
      observe(receipt);
    },
    async finishFixRun(runId, status, result, at, receipt) {
      const ended = await store.finishFixRun(runId, status, result, at, receipt);
      if (ended) observe(receipt);
      return ended;
    },
  };
}
