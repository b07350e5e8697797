// Preloaded into the bare proxy by hot-path.sh: a background job of a script starts with SIGINT ignored, and the
// bare proxy sets no handler of its own, so without this it would not exit (and write its profile) on SIGINT.
process.on('SIGINT', () => process.exit(0));
