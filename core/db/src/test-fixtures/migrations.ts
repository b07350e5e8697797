/** Migrations for the migrator tests: the second is not re-runnable, so applying it twice would fail. */
import { col, defineTable, type Migration } from '@gateway/sdk';

export const notes = defineTable('notes', { id: col.id(), text: col.string(100), created_at: col.timestamp().default(Date.now) });

export const migrations: Migration[] = [
  { id: 'test/0001-notes', tables: [notes] },
  {
    id: 'test/0002-notes-author',
    statements: {
      sqlite: ['ALTER TABLE "notes" ADD COLUMN "author" TEXT NULL'],
      mysql: ['ALTER TABLE `notes` ADD COLUMN `author` VARCHAR(100) NULL'],
    },
  },
  {
    id: 'test/0003-notes-author-index',
    statements: {
      sqlite: ['CREATE INDEX "notes_author_idx" ON "notes" ("author")'],
      mysql: ['CREATE INDEX `notes_author_idx` ON `notes` (`author`)'],
    },
  },
];
