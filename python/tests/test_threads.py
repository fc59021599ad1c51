"""Generation runs with the GIL released: another Python thread keeps running while a
large dataset is generated, and threads sharing a dataset get the right entries."""

import threading
import time

import harness_rl


def test_other_threads_run_during_generation():
    ds = harness_rl.create_dataset("syllogism", seed=0, size=200_000, level=3)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.05)
        start = time.perf_counter()
        entries = ds[:]  # one call: generation in chunks with the GIL released
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    assert len(entries) == 200_000
    inside = [x for x in ticks if start < x < end]
    # Holding the GIL for the whole call would leave the counter no tick inside it
    # (switches happen between bytecodes of the calling thread, not inside a call).
    assert len(inside) > 1000, (len(inside), end - start)


def test_threads_sharing_a_dataset_get_the_right_entries():
    ds = harness_rl.create_dataset("maze", seed=4, size=3000, level=2)
    want = [harness_rl.dumps(e) for e in ds]
    results = {}

    def work(k):
        if k % 2:
            results[k] = [harness_rl.dumps(e) for e in ds]
        else:
            results[k] = [harness_rl.dumps(ds[i]) for i in range(len(ds))]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(results[k] == want for k in range(4))
