import { createGateway } from './app.ts';
import { serve } from './serve.ts';

/** Starts the gateway on the environment of INTERFACE.md and stops it gracefully on SIGTERM / SIGINT. */
serve(await createGateway());
