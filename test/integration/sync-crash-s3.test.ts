// The crash test once more with the warehouse on S3: the REST fixture of the MinIO warehouse
// behind the credential-vending proxy, floe writing with the keys it vends. Every named crash
// point, and fewer random kills than the local run (each sync is slower on S3, and the local run
// already spreads 30 kills over a sync): FLOE_CRASH_KILLS overrides.
process.env.FLOE_CRASH_CATALOG = "rest-s3";
process.env.FLOE_CRASH_KILLS ??= "10";
await import("./sync-crash.test.ts");
