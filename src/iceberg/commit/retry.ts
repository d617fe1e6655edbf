// Optimistic commits with retries (spec "Commit Conflict Resolution and Retry"). Each attempt
// rebuilds its requirements and updates from the table as it is now. What is retried is what
// the error's kind says can succeed when tried again (isRetryable): a conflict (409) refreshes
// and rebuilds; an unknown outcome (5xx, a connection broken in flight) refreshes, and the next
// attempt's build step decides whether the change already landed; a catalog or storage that
// failed on the way (unreachable before the request left, 429) is asked again. Anything else
// (a refused request, bad credentials, a corrupt file, a change that no longer validates) is
// thrown at once.
// Backoff follows Java's commit.retry.* table properties; floe tries more often by default,
// because a sync racing a compaction job should win eventually rather than fail the run.
import { IcebergError, isRetryable } from "../errors.ts";
import type { TableMetadata } from "../spec/table-metadata.ts";
import {
  COMMIT_RETRY_MAX_WAIT_MS,
  COMMIT_RETRY_MIN_WAIT_MS,
  COMMIT_RETRY_NUM_RETRIES,
  propertyValue,
} from "../spec/table-properties.ts";
import { CommitConflictError, type TableRequirement, type TableUpdate } from "../spec/table-update.ts";
import type { Table } from "../table.ts";

export interface RetryPolicy {
  attempts: number;
  minWaitMs: number;
  maxWaitMs: number;
}

export function retryPolicyFromProperties(properties: Readonly<Record<string, string>>): RetryPolicy {
  return {
    attempts: propertyValue(properties, COMMIT_RETRY_NUM_RETRIES) + 1,
    minWaitMs: propertyValue(properties, COMMIT_RETRY_MIN_WAIT_MS),
    maxWaitMs: propertyValue(properties, COMMIT_RETRY_MAX_WAIT_MS),
  };
}

export function backoffMs(policy: RetryPolicy, attempt: number): number {
  const ceiling = Math.min(policy.maxWaitMs, policy.minWaitMs * 2 ** attempt);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

export interface CommitRequest {
  requirements: TableRequirement[];
  updates: TableUpdate[];
}

/**
 * Runs `build` against the current table and commits what it returns, retrying conflicts.
 * `build` returns undefined when there is nothing (left) to commit: the change already landed.
 */
export async function commitWithRetries(
  table: Table,
  build: (base: TableMetadata, attempt: number) => Promise<CommitRequest | undefined>,
): Promise<void> {
  const policy = retryPolicyFromProperties(table.metadata.properties);
  for (let attempt = 0; ; attempt++) {
    const request = await build(table.metadata, attempt);
    if (!request) return;
    try {
      await table.commit(request.requirements, request.updates);
      return;
    } catch (error) {
      if (!isRetryable(error)) throw error;
      if (attempt + 1 >= policy.attempts) throw gaveUp(table, policy, error);
      await new Promise((resolve) => setTimeout(resolve, backoffMs(policy, attempt)));
      await table.refresh();
    }
  }
}

/** The last attempt's failure, said as the end of the retries; a conflict stays a CommitConflictError. */
function gaveUp(table: Table, policy: RetryPolicy, error: unknown): Error {
  const message = `${table.name}: gave up after ${policy.attempts} commit attempts; last error: ${(error as Error).message}`;
  if (error instanceof CommitConflictError) return new CommitConflictError(message, { cause: error });
  if (error instanceof IcebergError) return new IcebergError(error.kind, message, { cause: error });
  return error as Error;
}
