#!/usr/bin/env node
/** `realty-batch`: parses the command line (src/cli/program.ts) and sets the exit code. */
import { runProgram } from './program.js';

process.exitCode = await runProgram(process.argv);
