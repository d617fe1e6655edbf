// npm run demo: the seed walkthrough end to end. It needs the sync engine, which has not landed.
console.log("floe demo: the sync engine has not landed yet, so there is nothing to demonstrate.");
console.log("Run `npm test` to see the real-service test harness at work.");
process.exit(1);
