// @supabase/postgrest-js (package-lock.json pins the version) against
// ffb-rest. run.sh makes the objects (schema.sql.in) and starts the server;
// FFB_REST_URL is its address and FFB_PGJS_PREFIX the objects' prefix.
// Every call's whole answer is checked: data, count, status and error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PostgrestClient } from '@supabase/postgrest-js';

const url = process.env.FFB_REST_URL;
const P = process.env.FFB_PGJS_PREFIX;
assert.ok(url && P, 'FFB_REST_URL and FFB_PGJS_PREFIX (run.sh sets them)');
const db = new PostgrestClient(url);
const A = `${P}_authors`, B = `${P}_books`, T = `${P}_tags`;

// A successful answer: status, data, count, no error.
function ok(res, status, data, count = null) {
  assert.equal(res.error, null, `unexpected error ${JSON.stringify(res.error)}`);
  assert.equal(res.status, status);
  assert.deepEqual(res.data, data);
  assert.equal(res.count, count);
}
// A failed one: status and the error object's code (and message part).
function fails(res, status, code, message) {
  assert.equal(res.status, status, JSON.stringify(res.error));
  assert.equal(res.data, null);
  assert.equal(res.count, null);
  assert.ok(res.error, 'an error object');
  assert.equal(res.error.code, code);
  assert.equal(typeof res.error.message, 'string');
  if (message) assert.match(res.error.message, message);
  assert.ok('details' in res.error && 'hint' in res.error);
}
const ids = (rows) => rows.map((r) => ({ id: r }));
async function idsOf(q) {
  const res = await q;
  assert.equal(res.error, null, JSON.stringify(res.error));
  assert.equal(res.status, 200);
  return res.data.map((r) => r.id);
}

test('select: columns, *, renames, casts', async () => {
  ok(await db.from(B).select('id,title').order('id'), 200, [
    { id: 1, title: 'Alpha' }, { id: 2, title: 'Beta' },
    { id: 3, title: 'Gamma' }, { id: 4, title: 'delta 50%' }]);
  ok(await db.from(A).select().eq('id', 1), 200,
    [{ id: 1, name: 'Ann', country: 'NO', born: '1950-01-02' }]);
  ok(await db.from(B).select('*').eq('id', 3), 200, [
    { id: 3, title: 'Gamma', author_id: 2, price: 5.25, pages: 50, in_print: true }]);
  ok(await db.from(B).select('book_id:id,name:title').eq('id', 1), 200,
    [{ book_id: 1, name: 'Alpha' }]);
  ok(await db.from(B).select('id,pages::text,n:price::int').eq('id', 2), 200,
    [{ id: 2, pages: '200', n: 20 }]);
});

test('filters: eq neq gt gte lt lte', async () => {
  const q = () => db.from(B).select('id').order('id');
  assert.deepEqual(await idsOf(q().eq('author_id', 1)), [1, 2]);
  assert.deepEqual(await idsOf(q().neq('author_id', 1)), [3]); // NULL is not <> 1
  assert.deepEqual(await idsOf(q().gt('pages', 100)), [2, 4]);
  assert.deepEqual(await idsOf(q().gte('pages', 100)), [1, 2, 4]);
  assert.deepEqual(await idsOf(q().lt('pages', 100)), [3]);
  assert.deepEqual(await idsOf(q().lte('pages', 100)), [1, 3]);
  assert.deepEqual(await idsOf(q().gte('price', 10.5).lt('price', 20)), [1]);
  assert.deepEqual(await idsOf(q().filter('pages', 'gte', 200)), [2, 4]);
  assert.deepEqual(await idsOf(q().match({ author_id: 1, pages: 200 })), [2]);
});

test('filters: like ilike in is not or', async () => {
  const q = () => db.from(B).select('id').order('id');
  assert.deepEqual(await idsOf(q().like('title', '%lpha')), [1]);
  assert.deepEqual(await idsOf(q().like('title', '*et*')), [2]);
  assert.deepEqual(await idsOf(q().like('title', 'alpha')), []); // case matters
  assert.deepEqual(await idsOf(q().ilike('title', 'D*')), [4]);
  assert.deepEqual(await idsOf(q().ilike('title', '*ALPHA*')), [1]);
  assert.deepEqual(await idsOf(q().like('title', '%50\\%')), [4]); // escaped %
  assert.deepEqual(await idsOf(q().in('id', [1, 3])), [1, 3]);
  assert.deepEqual(await idsOf(q().in('title', ['Beta', 'delta 50%'])), [2, 4]);
  assert.deepEqual(await idsOf(q().in('id', [])), []);
  assert.deepEqual(await idsOf(q().is('in_print', null)), [4]);
  assert.deepEqual(await idsOf(q().is('in_print', true)), [1, 3]);
  assert.deepEqual(await idsOf(q().is('in_print', false)), [2]);
  assert.deepEqual(await idsOf(q().not('author_id', 'is', null)), [1, 2, 3]);
  assert.deepEqual(await idsOf(q().not('id', 'in', '(1,2)')), [3, 4]);
  assert.deepEqual(await idsOf(q().not('title', 'like', '*a*')), []);
  assert.deepEqual(await idsOf(q().or('pages.lt.60,title.eq.Beta')), [2, 3]);
  assert.deepEqual(await idsOf(q().or('id.eq.4,and(author_id.eq.1,in_print.is.true)')), [1, 4]);
  assert.deepEqual(await idsOf(q().eq('author_id', 1).or('pages.gt.150,price.lt.11')), [1, 2]);
});

test('order, limit, range', async () => {
  const q = () => db.from(B).select('id');
  assert.deepEqual(await idsOf(q().order('pages', { ascending: false })), [4, 2, 1, 3]);
  // PostgreSQL's NULL placement: last on ASC, first on DESC
  assert.deepEqual(await idsOf(q().order('price')), [3, 1, 2, 4]);
  assert.deepEqual(await idsOf(q().order('price', { ascending: false })), [4, 2, 1, 3]);
  assert.deepEqual(await idsOf(q().order('price', { nullsFirst: true })), [4, 3, 1, 2]);
  assert.deepEqual(await idsOf(
    q().order('author_id', { nullsFirst: true }).order('id', { ascending: false })), [4, 2, 1, 3]);
  assert.deepEqual(await idsOf(q().order('id').limit(2)), [1, 2]);
  ok(await q().order('id').range(1, 2), 200, ids([2, 3]));
  ok(await q().order('id').range(3, 10), 200, ids([4]));
});

test('count exact, head', async () => {
  ok(await db.from(B).select('id', { count: 'exact' }).order('id'), 200, ids([1, 2, 3, 4]), 4);
  // a partial page: 206 with the total
  ok(await db.from(B).select('id', { count: 'exact' }).order('id').range(0, 1), 206, ids([1, 2]), 4);
  ok(await db.from(B).select('id', { count: 'exact' }).eq('author_id', 1).limit(1), 206, ids([1]), 2);
  ok(await db.from(B).select('*', { count: 'exact', head: true }), 200, null, 4);
  ok(await db.from(B).select('*', { count: 'exact', head: true }).eq('author_id', 1), 200, null, 2);
  ok(await db.from(B).select('*', { count: 'exact', head: true }).eq('id', 99), 200, null, 0);
  // past the end: 416 PGRST103
  fails(await db.from(B).select('id', { count: 'exact' }).range(10, 12), 416, 'PGRST103');
});

test('single, maybeSingle', async () => {
  ok(await db.from(A).select('id,name').eq('id', 2).single(), 200, { id: 2, name: 'Bob' });
  fails(await db.from(A).select('id').eq('id', 9).single(), 406, 'PGRST116');
  fails(await db.from(A).select('id').single(), 406, 'PGRST116');
  ok(await db.from(A).select('name').eq('id', 3).maybeSingle(), 200, { name: 'Cid' });
  ok(await db.from(A).select('name').eq('id', 9).maybeSingle(), 200, null);
  const many = await db.from(A).select('id').maybeSingle(); // the client's own check
  assert.equal(many.status, 406);
  assert.equal(many.error.code, 'PGRST116');
});

test('embeds: to-one, to-many, !inner, embedded filters', async () => {
  ok(await db.from(B).select(`id,author:${A}(name)`).order('id'), 200, [
    { id: 1, author: { name: 'Ann' } }, { id: 2, author: { name: 'Ann' } },
    { id: 3, author: { name: 'Bob' } }, { id: 4, author: null }]);
  ok(await db.from(A).select(`name,books:${B}(title)`).order('id')
    .order('id', { referencedTable: 'books', ascending: false }), 200, [
    { name: 'Ann', books: [{ title: 'Beta' }, { title: 'Alpha' }] },
    { name: 'Bob', books: [{ title: 'Gamma' }] },
    { name: 'Cid', books: [] }]);
  // embedded filter: the children filtered, every parent kept
  ok(await db.from(A).select(`id,books:${B}(id)`).lt('books.pages', 150).order('id')
    .order('id', { referencedTable: 'books' }), 200, [
    { id: 1, books: [{ id: 1 }] }, { id: 2, books: [{ id: 3 }] }, { id: 3, books: [] }]);
  // !inner: parents without a matching child go
  ok(await db.from(A).select(`id,books:${B}!inner(id,title)`).eq('books.pages', 200), 200,
    [{ id: 1, books: [{ id: 2, title: 'Beta' }] }]);
  ok(await db.from(A).select(`id,${B}!inner(id)`).order('id')
    .order('id', { referencedTable: B }), 200,
    [{ id: 1, [B]: [{ id: 1 }, { id: 2 }] }, { id: 2, [B]: [{ id: 3 }] }]);
  ok(await db.from(B).select(`id,author:${A}!inner(name)`).eq('author.country', 'SE'), 200,
    [{ id: 3, author: { name: 'Bob' } }]);
  // limit per parent, count of the parents
  ok(await db.from(A).select(`id,books:${B}(id)`, { count: 'exact' }).order('id')
    .order('id', { referencedTable: 'books' }).limit(1, { referencedTable: 'books' }).limit(2),
    206, [{ id: 1, books: [{ id: 1 }] }, { id: 2, books: [{ id: 3 }] }], 3);
});

test('insert: single, bulk, representation, errors', async () => {
  ok(await db.from(T).insert({ id: 10, name: 'green' }), 201, null);
  ok(await db.from(T).insert({ id: 11, name: 'black', hits: 2 }).select(), 201,
    [{ id: 11, name: 'black', hits: 2 }]);
  // the absent key of a single object takes the column's default
  ok(await db.from(T).select().eq('id', 10), 200, [{ id: 10, name: 'green', hits: 0 }]);
  // bulk: postgrest-js sends columns="id","name","hits"; absent keys are NULL...
  ok(await db.from(T).insert([{ id: 12, name: 'a1' }, { id: 13, name: 'a2', hits: 3 }])
    .select('id,hits').order('id'), 201, [{ id: 12, hits: null }, { id: 13, hits: 3 }]);
  // ...or the default with defaultToNull: false (Prefer: missing=default)
  ok(await db.from(T).insert([{ id: 14, name: 'a3' }, { id: 15, name: 'a4', hits: 4 }],
    { defaultToNull: false }).select('id,hits'), 201, [{ id: 14, hits: 0 }, { id: 15, hits: 4 }]);
  ok(await db.from(T).insert([{ id: 16, name: 'a5' }], { count: 'exact' }), 201, null, 1);
  ok(await db.from(T).insert({ id: 17, name: 'a6' }).select('id').single(), 201, { id: 17 });
  fails(await db.from(T).insert({ id: 10, name: 'dup' }), 409, '23505');
  fails(await db.from(T).insert({ id: 18 }), 400, '23502');
  fails(await db.from(T).insert({ id: 19, name: 'x', nosuch: 1 }), 400, 'PGRST204');
});

test('update, delete', async () => {
  ok(await db.from(T).update({ hits: 42 }).eq('id', 10).select(), 200,
    [{ id: 10, name: 'green', hits: 42 }]);
  ok(await db.from(T).update({ hits: 43 }).eq('id', 10), 204, null);
  ok(await db.from(T).update({ hits: 1 }, { count: 'exact' }).in('id', [12, 13]), 204, null, 2);
  ok(await db.from(T).update({ hits: 5 }).eq('id', 999).select(), 200, []);
  ok(await db.from(T).select('hits').eq('id', 10).single(), 200, { hits: 43 });
  ok(await db.from(T).delete().eq('id', 12).select('id,name'), 200, [{ id: 12, name: 'a1' }]);
  ok(await db.from(T).delete({ count: 'exact' }).in('id', [13, 14]), 204, null, 2);
  ok(await db.from(T).delete().gte('id', 15).lte('id', 17), 204, null);
  assert.deepEqual(await idsOf(db.from(T).select('id').order('id')), [1, 2, 10, 11]);
  fails(await db.from(T).update({ nosuch: 1 }).eq('id', 10), 400, 'PGRST204');
});

test('upsert: primary key, onConflict, ignoreDuplicates', async () => {
  ok(await db.from(T).upsert({ id: 1, name: 'red', hits: 99 }).select(), 201,
    [{ id: 1, name: 'red', hits: 99 }]);
  ok(await db.from(T).upsert({ id: 2, name: 'blue', hits: 8 }, { onConflict: 'name' }).select(),
    201, [{ id: 2, name: 'blue', hits: 8 }]);
  ok(await db.from(T).upsert([{ id: 30, name: 'cyan', hits: 1 }, { id: 31, name: 'blue', hits: 9 }],
    { onConflict: 'name' }).select('id,name,hits').order('id'), 201,
    [{ id: 30, name: 'cyan', hits: 1 }, { id: 31, name: 'blue', hits: 9 }]);
  // ignoreDuplicates: the existing row stays, only the new one comes back
  ok(await db.from(T).upsert([{ id: 1, name: 'red', hits: 0 }, { id: 20, name: 'white', hits: 1 }],
    { ignoreDuplicates: true }).select(), 201, [{ id: 20, name: 'white', hits: 1 }]);
  ok(await db.from(T).select().in('id', [1, 20, 31]).order('id'), 200, [
    { id: 1, name: 'red', hits: 99 }, { id: 20, name: 'white', hits: 1 },
    { id: 31, name: 'blue', hits: 9 }]);
  ok(await db.from(T).upsert({ id: 1, name: 'red', hits: 0 }), 201, null);
  ok(await db.from(T).select('hits').eq('id', 1).single(), 200, { hits: 0 });
});

test('rpc: GET and POST', async () => {
  ok(await db.rpc(`${P}_add`, { a: 2, b: 3 }), 200, 5);
  ok(await db.rpc(`${P}_add`, { a: 2, b: 40 }, { get: true }), 200, 42);
  ok(await db.rpc(`${P}_books_by`, { author: 1 }, { get: true }), 200,
    [{ id: 1, title: 'Alpha' }, { id: 2, title: 'Beta' }]);
  ok(await db.rpc(`${P}_books_by`, { author: 1, min_pages: 150 }), 200,
    [{ id: 2, title: 'Beta' }]);
  ok(await db.rpc(`${P}_books_by`, { author: 3 }), 200, []);
  ok(await db.rpc(`${P}_stats`, { author: 1 }), 200, { n: 2, total: 30.5 });
  // (the upsert on name moved 'blue' to id 31 with 9 hits)
  ok(await db.rpc(`${P}_touch`, { tag: 31 }), 204, null);
  ok(await db.from(T).select('hits').eq('id', 31).single(), 200, { hits: 10 });
  // select, filters and order on a selectable procedure's result, as on a
  // table (a POST's query string too)
  ok(await db.rpc(`${P}_books_by`, { author: 1 }).select('id'), 200, [{ id: 1 }, { id: 2 }]);
  ok(await db.rpc(`${P}_books_by`, { author: 1 }, { get: true }).eq('id', 1), 200,
    [{ id: 1, title: 'Alpha' }]);
  ok(await db.rpc(`${P}_books_by`, { author: 1 }).order('id', { ascending: false }), 200,
    [{ id: 2, title: 'Beta' }, { id: 1, title: 'Alpha' }]);
  ok(await db.rpc(`${P}_books_by`, { author: 1 }, { get: true }).select('t:title').limit(1)
    .single(), 200, { t: 'Alpha' });
  // HEAD: no body; count: 'exact' from Content-Range 0-1/2
  ok(await db.rpc(`${P}_books_by`, { author: 1 }, { head: true, count: 'exact' }), 200, null, 2);
  ok(await db.rpc(`${P}_books_by`, { author: 1 }, { count: 'exact' }), 200,
    [{ id: 1, title: 'Alpha' }, { id: 2, title: 'Beta' }], 2);
  ok(await db.rpc(`${P}_books_by`, { author: 3 }, { get: true, count: 'exact' }), 200, [], 0);
  fails(await db.rpc(`${P}_nosuch`, {}), 404, 'PGRST202');
  fails(await db.rpc(`${P}_add`, { a: 1, c: 2 }), 404, 'PGRST202');
});

test('errors: unknown table, unknown column, bad value', async () => {
  fails(await db.from(`${P}_nosuch`).select(), 404, 'PGRST205', /nosuch/);
  fails(await db.from(B).select('id,nosuch'), 400, '42703', /nosuch/);
  fails(await db.from(B).select('id').eq('nosuch', 1), 400, '42703', /nosuch/);
  fails(await db.from(B).select('id').order('nosuch'), 400, '42703', /nosuch/);
  fails(await db.from(B).select('id').eq('id', 'abc'), 400, '22018');
  fails(await db.from(B).select(`id,${P}_nosuch(id)`), 400, 'PGRST200');
  // throwOnError: a PostgrestError with the same fields
  await assert.rejects(async () => await db.from(`${P}_nosuch`).select().throwOnError(),
    (e) => e.name === 'PostgrestError' && e.code === 'PGRST205');
});
