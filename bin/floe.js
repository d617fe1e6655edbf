#!/usr/bin/env node
// The CLI is TypeScript run through Node's type stripping (Node >= 22.18 / 24).
import "../src/cli/main.ts";
