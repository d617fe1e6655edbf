// What an S3 failure says: the kind, the operation and path, what to check, and where the
// credentials came from; never a secret.
import assert from "node:assert/strict";
import { test } from "node:test";
import { classifyS3Failure, storageError } from "#src/iceberg/io/storage-error.ts";

/** The shape of an AWS SDK v3 service error. */
function sdkError(name: string, status: number, message = name) {
  return Object.assign(new Error(message), { name, $metadata: { httpStatusCode: status }, $fault: "client" });
}

const context = {
  endpoint: "http://127.0.0.1:9000",
  region: "us-east-1",
  bucket: "b",
  credentialSource: { kind: "catalog" as const, detail: "storage-credentials for s3://b/t" },
};

test("S3 error codes, bodiless HEAD answers and network failures are told apart", () => {
  const kinds = [
    sdkError("AccessDenied", 403),
    sdkError("NoSuchBucket", 404),
    sdkError("NoSuchKey", 404),
    sdkError("NotFound", 404),
    sdkError("ExpiredToken", 400),
    sdkError("InvalidAccessKeyId", 403),
    sdkError("SignatureDoesNotMatch", 403),
    sdkError("Forbidden", 403),
    sdkError("AuthorizationHeaderMalformed", 400),
    sdkError("Unknown", 405, "UnknownError"),
    sdkError("InternalError", 500),
    Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" }),
    Object.assign(new Error("fetch failed"), { cause: Object.assign(new Error("getaddrinfo"), { code: "ENOTFOUND" }) }),
  ].map((e) => classifyS3Failure(e).kind);
  assert.deepEqual(kinds, [
    "access-denied",
    "no-such-bucket",
    "not-found",
    "not-found",
    "expired-credentials",
    "invalid-credentials",
    "invalid-credentials",
    "access-denied",
    "wrong-region",
    "not-s3",
    "failed",
    "unreachable",
    "unreachable",
  ]);
});

test("messages name the operation, the path, what to check and where the credentials came from", () => {
  const denied = storageError(
    classifyS3Failure(sdkError("AccessDenied", 403, "Access Denied.")),
    "write",
    "s3://b/t/f",
    context,
    undefined,
  );
  assert.equal(
    denied.message,
    "write s3://b/t/f: access denied (AccessDenied: Access Denied.) with credentials vended by the catalog (storage-credentials for s3://b/t): they do not allow this operation on this path",
  );
  assert.equal(denied.kind, "access-denied");
  const bucket = storageError(classifyS3Failure(sdkError("NoSuchBucket", 404)), "read", "s3://b/k", context, undefined);
  assert.match(bucket.message, /^read s3:\/\/b\/k: bucket b does not exist at http:\/\/127\.0\.0\.1:9000/);
  const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" });
  const unreachable = storageError(classifyS3Failure(refused), "exists", "s3://b/k", context, refused);
  assert.match(
    unreachable.message,
    /cannot reach the S3 endpoint http:\/\/127\.0\.0\.1:9000 \(ECONNREFUSED\); check the endpoint/,
  );
  const expired = storageError(
    classifyS3Failure(sdkError("ExpiredToken", 400)),
    "write",
    "s3://b/k",
    {
      ...context,
      credentialSource: { kind: "job-file" },
    },
    undefined,
  );
  assert.match(
    expired.message,
    /have expired .*static credentials of the job file.*renew destination\.iceberg\.storage\.s3\.session_token/,
  );
  const aws = storageError(
    classifyS3Failure(sdkError("NoSuchBucket", 404)),
    "read",
    "s3://b/k",
    {
      ...context,
      endpoint: undefined,
      region: "eu-west-1",
    },
    undefined,
  );
  assert.match(aws.message, /does not exist at AWS S3 \(eu-west-1\)/);
  const noRegion = storageError(
    classifyS3Failure(new Error("Region is missing")),
    "read",
    "s3://b/k",
    {
      ...context,
      endpoint: undefined,
      region: undefined,
    },
    undefined,
  );
  assert.equal(noRegion.kind, "wrong-region");
  assert.match(noRegion.message, /no region given.*set destination\.iceberg\.storage\.s3\.region/);
});
