'use strict';
/*
 * The node-firebird peer of bench_drivers (bench/peer_node.c drives it over
 * stdin/stdout, one command per line; see there for the protocol).
 *
 * node-firebird is used the way its README recommends: the promise API,
 * the per-connection prepared-statement cache (warmed in setup, as the C
 * peers prepare in setup), 64 KB blob chunks, executeBatch (the Firebird 4
 * batch API) for the batch scenario. Wire encryption is left at its
 * default, WIRE_CRYPT_ENABLE, against a server that requires it.
 */
const readline = require('readline');
const Firebird = require('node-firebird');

const env = process.env;
const options = {
    host: env.FFB_BENCH_HOST || '127.0.0.1',
    port: Number(env.FFB_BENCH_PORT || 3050),
    database: env.FFB_BENCH_DB,
    user: env.FFB_BENCH_USER || 'SYSDBA',
    password: env.FFB_BENCH_PASSWORD || 'masterkey',
    encoding: 'UTF8',
    wireCrypt: Firebird.WIRE_CRYPT_ENABLE,
    wireCompression: false,
    blobChunkSize: 65535,
    blobReadChunkSize: 65535,
    statementCacheSize: 16,
    enableKeepAlive: false,
};

/*
 * node-firebird's attach has been seen (twice in CI, never reproduced at
 * will) to wait for ever: both sockets open, neither side sending. The
 * peer gives it 20 s, says so on stderr (progress.log) and attaches again,
 * up to twice; the retry's time counts in that run.
 */
const ATTACH_TIMEOUT_MS = 20000;
async function attach() {
    for (let attempt = 1; ; attempt++) {
        let timer;
        const timeout = new Promise((_, reject) => {
            timer = setTimeout(() => reject(new Error('attach timed out')),
                               ATTACH_TIMEOUT_MS);
        });
        const pending = Firebird.attachAsync(options);
        try {
            return await Promise.race([pending, timeout]);
        } catch (e) {
            if (e.message !== 'attach timed out' || attempt === 3)
                throw e;
            /* Should the abandoned attach still finish or fail, that must
               not end the process (an unhandled rejection would). */
            pending.then((d) => d.detachAsync().catch(() => {}), () => {});
            process.stderr.write(`node-firebird: attach ${attempt} did not ` +
                `complete in ${ATTACH_TIMEOUT_MS} ms; attaching again\n`);
        } finally {
            clearTimeout(timer);
        }
    }
}

/* Must match bench/bench.h. */
const ROWS = 10000;
const BLOB_SMALL = 8192;
const BLOB_LARGE = 1 << 20;
const SQL_POINT = 'select id, name, amount, created from BENCH_T where id = ?';
const SQL_SCAN = 'select id, name, amount, created from BENCH_T';
const SQL_INSERT = 'insert into BENCH_INS (id, name, amount) values (?, ?, ?)';
const SQL_BLOB_INSERT = 'insert into BENCH_BLOBW (id, data) values (?, ?)';
const SQL_BLOB_SELECT = 'select data from BENCH_BLOBW where id = ?';
const SQL_BLOB_SCAN = 'select id, data from BENCH_BLOB where id <= ? order by id';
const SQL_WIRE_INFO =
    "select rdb$get_context('SYSTEM', 'WIRE_CRYPT_PLUGIN'), " +
    "rdb$get_context('SYSTEM', 'WIRE_COMPRESSED'), mon$remote_version " +
    'from mon$attachments where mon$attachment_id = current_connection';

const pointId = (i) => ((i * 7919) % ROWS) + 1;
const blobByte = (id, k) => (k * 131 + id * 7) & 0xff;

function blobContent(id, size) {
    const b = Buffer.allocUnsafe(size);
    for (let k = 0; k < size; k++) b[k] = blobByte(id, k);
    return b;
}

function checkRow(row, want) {
    /* amount is id / 100, NUMERIC(18,2) */
    if (row[0] !== want || Math.round(Number(row[2]) * 100) !== want ||
        String(row[1]).length < 5)
        throw new Error(`unexpected row ${row[0]} (wanted ${want})`);
}

/* Read a blob field (a function, see the README) into one Buffer. */
function readBlob(field, tx) {
    return new Promise((resolve, reject) => {
        field(tx, (err, name, e) => {
            if (err) return reject(err);
            const parts = [];
            e.on('data', (chunk) => parts.push(chunk));
            e.on('end', () => resolve(Buffer.concat(parts)));
            e.on('error', reject);
        });
    });
}

function checkBlob(buf, id, size) {
    if (buf.length !== size || buf[0] !== blobByte(id, 0) ||
        buf[size - 1] !== blobByte(id, size - 1))
        throw new Error(`blob ${id}: ${buf.length} bytes, wrong content`);
}

let db = null;
let cdbs = []; /* the concurrency scenario's connections */
let current = null; /* { name, n } */
let pool = []; /* the pipelined scenarios' statements */

/* n statements of one text, prepared concurrently (untimed). */
async function preparePool(sql, n) {
    const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
    pool = await Promise.all(Array.from({ length: n }, () => tx.newStatementAsync(sql)));
    await tx.commitAsync();
}

async function prepareCached(sqls) {
    const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
    for (const sql of sqls) {
        const st = await tx.newStatementAsync(sql);
        await st.releaseAsync();
    }
    await tx.commitAsync();
}

const scenarios = {
    connect: {
        run: async (n) => {
            for (let i = 0; i < n; i++) {
                const d = await attach();
                await d.detachAsync();
            }
        },
    },
    select_ac: {
        sql: [SQL_POINT],
        run: async (n) => {
            for (let i = 0; i < n; i++) {
                const rows = await db.executeAsync(SQL_POINT, [pointId(i)]);
                if (rows.length !== 1) throw new Error('point select: no row');
                checkRow(rows[0], pointId(i));
            }
        },
    },
    select_tx: {
        sql: [SQL_POINT],
        run: async (n) => {
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            for (let i = 0; i < n; i++) {
                const rows = await tx.executeAsync(SQL_POINT, [pointId(i)]);
                if (rows.length !== 1) throw new Error('point select: no row');
                checkRow(rows[0], pointId(i));
            }
            await tx.commitAsync();
        },
    },
    /* The pipelined scenarios: node-firebird writes each request at once
       and matches the answers in order, so concurrent requests on one
       connection pipeline. Its statement cache holds one statement per SQL
       text, and concurrent runs of a text prepare spares in the timed part;
       instead, n statements are prepared in setup (as libfastfb does) and
       all n executions are started at once (Promise.all). */
    select_pipe: {
        pool: SQL_POINT,
        run: async (n) => {
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            const results = await Promise.all(pool.slice(0, n).map(async (st, i) => {
                await st.executeAsync(tx, [pointId(i)]);
                return st.fetchAllAsync(tx);
            }));
            results.forEach((rows, i) => {
                if (rows.length !== 1) throw new Error('point select: no row');
                checkRow(rows[0], pointId(i));
            });
            await tx.commitAsync();
        },
    },
    scan: {
        sql: [SQL_SCAN],
        run: async (n) => {
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            for (let i = 0; i < n; i++) {
                const rows = await tx.executeAsync(SQL_SCAN);
                let sum = 0;
                for (const r of rows) {
                    checkRow(r, r[0]);
                    sum += r[0];
                }
                if (rows.length !== ROWS || sum !== (ROWS * (ROWS + 1)) / 2)
                    throw new Error(`scan: ${rows.length} rows`);
            }
            await tx.commitAsync();
        },
    },
    insert_rows: {
        sql: [SQL_INSERT],
        run: async (n) => {
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            for (let i = 0; i < n; i++)
                await tx.executeAsync(SQL_INSERT, [i + 1, `row ${i}`, i * 1.25]);
            await tx.commitAsync();
        },
        teardown: () => db.executeAsync('delete from BENCH_INS'),
    },
    insert_pipe: {
        pool: SQL_INSERT,
        run: async (n) => {
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            await Promise.all(pool.slice(0, n).map((st, i) =>
                st.executeAsync(tx, [i + 1, `row ${i}`, i * 1.25])));
            await tx.commitAsync();
        },
        teardown: () => db.executeAsync('delete from BENCH_INS'),
    },
    insert_batch: {
        sql: [SQL_INSERT],
        run: async (n) => {
            const rows = [];
            for (let i = 0; i < n; i++) rows.push([i + 1, `row ${i}`, i * 1.25]);
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            const r = await tx.executeBatchAsync(SQL_INSERT, rows);
            if (!r.success || r.recordCount !== n)
                throw new Error(`batch: ${r.recordCount} records`);
            await tx.commitAsync();
        },
        teardown: () => db.executeAsync('delete from BENCH_INS'),
    },
    blob_rw: {
        sql: [SQL_BLOB_INSERT, SQL_BLOB_SELECT],
        run: async (n) => {
            for (let i = 0; i < n; i++) {
                const id = i + 1;
                const data = blobContent(id, BLOB_LARGE);
                const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
                await tx.executeAsync(SQL_BLOB_INSERT, [id, data]);
                const rows = await tx.executeAsync(SQL_BLOB_SELECT, [id]);
                if (rows.length !== 1) throw new Error(`blob ${id}: not found`);
                checkBlob(await readBlob(rows[0][0], tx), id, BLOB_LARGE);
                await tx.commitAsync();
            }
        },
        teardown: () => db.executeAsync('delete from BENCH_BLOBW'),
    },
    blob_scan: {
        sql: [SQL_BLOB_SCAN],
        run: async (n) => {
            const tx = await db.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
            const rows = await tx.executeAsync(SQL_BLOB_SCAN, [n]);
            if (rows.length !== n) throw new Error(`blob scan: ${rows.length} rows`);
            /* The README's "Reading Multiples Blobs" pattern: all reads
               started at once, in the same transaction. */
            const blobs = await Promise.all(rows.map((r) => readBlob(r[1], tx)));
            blobs.forEach((b, k) => checkBlob(b, rows[k][0], BLOB_SMALL));
            await tx.commitAsync();
        },
    },
};

/*
 * The concurrency scenario: N connections, all on this one event loop, and
 * N logical clients, one per connection, each running auto-commit point
 * selects (db.executeAsync, as select_ac) with random ids, one after the
 * other, until the time is up. The ids come from the same generator as the
 * C peers' (xorshift64*, bench/bench.h).
 */
const MASK64 = (1n << 64n) - 1n;
function randSeed(client) {
    return (0x9E3779B97F4A7C15n * BigInt(client + 1)) & MASK64;
}
function randId(state) {
    let x = state.x;
    x ^= x >> 12n;
    x = (x ^ (x << 25n)) & MASK64;
    x ^= x >> 27n;
    state.x = x;
    return Number((((x * 2685821657736338717n) & MASK64) >> 33n) % BigInt(ROWS)) + 1;
}

async function concSetup(n) {
    const settled = await Promise.allSettled(Array.from({ length: n }, () => attach()));
    const failed = settled.find((r) => r.status === 'rejected');
    cdbs = settled.filter((r) => r.status === 'fulfilled').map((r) => r.value);
    if (failed) {
        await Promise.all(cdbs.map((d) => d.detachAsync().catch(() => {})));
        cdbs = [];
        if (failed.reason && failed.reason.message === 'attach timed out')
            return `na its attach never completed (3 tries of ${ATTACH_TIMEOUT_MS} ms)`;
        throw failed.reason;
    }
    /* Warm each connection's statement cache, as setup does elsewhere. */
    await Promise.all(cdbs.map(async (d) => {
        const tx = await d.transactionAsync(Firebird.ISOLATION_READ_COMMITTED);
        const st = await tx.newStatementAsync(SQL_POINT);
        await st.releaseAsync();
        await tx.commitAsync();
    }));
    return 'ok';
}

async function concRun(ms) {
    const t0 = process.hrtime.bigint();
    const c0 = process.cpuUsage();
    const end = t0 + BigInt(ms) * 1000000n;
    const lat = [];
    await Promise.all(cdbs.map(async (d, k) => {
        const state = { x: randSeed(k) };
        while (process.hrtime.bigint() < end) {
            const id = randId(state);
            const q0 = process.hrtime.bigint();
            const rows = await d.executeAsync(SQL_POINT, [id]);
            if (rows.length !== 1) throw new Error(`point select ${id}: ${rows.length} rows`);
            checkRow(rows[0], id);
            lat.push(process.hrtime.bigint() - q0);
        }
    }));
    const c = process.cpuUsage(c0);
    const ns = process.hrtime.bigint() - t0;
    lat.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const pct = (q) => (lat.length ? lat[Math.min(lat.length, Math.max(1, Math.ceil(q * lat.length))) - 1] : 0n);
    return `ok ${ns} ${(c.user + c.system) * 1000} ${lat.length} ${pct(0.5)} ${pct(0.99)}`;
}

async function handle(cmd, args) {
    switch (cmd) {
        case 'hello':
            return 'ok node-firebird';
        case 'setup': {
            const sc = scenarios[args[0]];
            if (!sc) return `na unknown scenario ${args[0]}`;
            current = { sc, n: Number(args[1]) };
            if (args[0] !== 'connect') {
                db = await attach();
                if (sc.sql) await prepareCached(sc.sql);
                if (sc.pool) await preparePool(sc.pool, current.n);
            }
            return 'ok';
        }
        case 'run': {
            const t0 = process.hrtime.bigint();
            const c0 = process.cpuUsage();
            await current.sc.run(current.n);
            const c = process.cpuUsage(c0); /* microseconds */
            return `ok ${process.hrtime.bigint() - t0} ${(c.user + c.system) * 1000}`;
        }
        case 'teardown': {
            if (db) {
                if (current && current.sc.teardown) await current.sc.teardown();
                /* the statements go with the attachment */
                pool = [];
                await db.detachAsync();
                db = null;
            }
            current = null;
            return 'ok';
        }
        case 'csetup':
            return concSetup(Number(args[0]));
        case 'crun':
            return concRun(Number(args[0]));
        case 'cteardown':
            await Promise.all(cdbs.map((d) => d.detachAsync()));
            cdbs = [];
            return 'ok';
        case 'info': {
            let d;
            try {
                d = await attach();
            } catch (e) {
                if (e.message !== 'attach timed out')
                    throw e;
                /* Not measured in this run: the report says so. */
                return `na its attach never completed (3 tries of ` +
                    `${ATTACH_TIMEOUT_MS} ms)`;
            }
            const rows = await d.executeAsync(SQL_WIRE_INFO);
            await d.detachAsync();
            const [plugin, , proto] = rows[0];
            const version = require('node-firebird/package.json').version;
            return `ok node-firebird ${version} (node ${process.version}), ` +
                `protocol ${String(proto).trim()}, wire crypt ${plugin || 'off'}`;
        }
        default:
            return `err unknown command ${cmd}`;
    }
}

const rl = readline.createInterface({ input: process.stdin });
let chain = Promise.resolve();
rl.on('line', (line) => {
    const [cmd, ...args] = line.trim().split(/\s+/);
    if (cmd === 'quit') {
        rl.close();
        return;
    }
    chain = chain.then(async () => {
        let reply;
        try {
            reply = await handle(cmd, args);
        } catch (err) {
            const msg = (err && err.message ? err.message : String(err)).replace(/\s+/g, ' ');
            reply = `err ${msg}`;
        }
        process.stdout.write(reply + '\n');
    });
});
rl.on('close', () => {
    chain.then(async () => {
        if (db) {
            try {
                await db.detachAsync();
            } catch (e) {
                /* exiting anyway */
            }
        }
        process.exit(0);
    });
});
