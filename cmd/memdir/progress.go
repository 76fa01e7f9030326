package main

// progressHelp is the paragraph of the manual of every command that shows
// progress (cli.Env.Progress).
const progressHelp = `Progress: work that takes more than a second shows how far it has got on
standard error: a live line on a terminal, otherwise a line every 5 seconds
(MEMDIR_PROGRESS=30s sets the interval, MEMDIR_PROGRESS=off turns it off).
--quiet and --json show none; standard output is never touched.`
