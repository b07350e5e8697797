/** A separate process that migrates the database at argv[2] and prints the ids it applied (migrator tests). */
import { createDatabase } from '../database.ts';
import { migrations } from './migrations.ts';

const database = await createDatabase(process.argv[2]!);
try {
  console.log(JSON.stringify(await database.migrate(migrations)));
} finally {
  await database.close();
}
