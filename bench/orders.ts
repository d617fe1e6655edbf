// The messages of the throughput benchmarks: orders-like JSON documents, the shape of the
// walkthrough's orders, padded to about a given size. Message n is a pure function of n and its
// id, so a benchmark can model what a table must hold without keeping the messages.
export const ORDER_STATUSES = ["created", "paid", "shipped", "delivered", "cancelled"] as const;
/** created_at of message 0; message n is n seconds later, so a row's created_at names its message. */
export const ORDER_EPOCH = Date.UTC(2026, 0, 1);

export interface OrderFields {
  status: string;
  amount: number;
  /** Milliseconds since the Unix epoch. */
  createdAt: number;
}

/** The fields of message n that a reader can compare: what the latest row of its id must hold. */
export function orderFields(n: number): OrderFields {
  return {
    status: ORDER_STATUSES[n % ORDER_STATUSES.length]!,
    amount: Math.round(((n * 37) % 100_000) + 1) / 100,
    createdAt: ORDER_EPOCH + n * 1000,
  };
}

/** Message n as an orders-like JSON document with order id `id`, padded to about `size` bytes. */
export function order(n: number, id: number, size: number): Buffer {
  const fields = orderFields(n);
  const document = {
    id,
    customer_id: (n * 31) % 50_000,
    status: fields.status,
    amount: fields.amount,
    currency: "EUR",
    created_at: new Date(fields.createdAt).toISOString(),
    note: "",
  };
  const bare = JSON.stringify(document).length;
  document.note = "x".repeat(Math.max(0, size - bare));
  return Buffer.from(JSON.stringify(document));
}
