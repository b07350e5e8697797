import type { Static, TSchema } from '@sinclair/typebox';
import type { TypeCheck } from '@sinclair/typebox/compiler';

/** The first thing wrong with a body: `param` names the field (`tools[3].function.name`), `reason` says what. */
export interface Violation {
  readonly param: string;
  readonly reason: string;
}

/** One endpoint's body rules: the compiled schema, then the rules that span several fields. */
export interface BodyValidator<T extends TSchema = TSchema> {
  readonly check: TypeCheck<T>;
  /** Runs only on a body that passed `check`, so it may trust the field types. */
  crossCheck(body: Static<T>): Violation | undefined;
}
