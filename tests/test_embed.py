"""Hashed word vectors (embed.py): stable across processes, compact, and the stored bytes a contract."""
import json
import os
import subprocess
import sys

from openmemory import embed
from tests.helpers import ROOT, TempHome


class Embed(TempHome):
    def test_vectors_are_stable_across_processes(self):
        code = ("import json; from openmemory import embed; "
                "print(json.dumps(list(embed.decode(embed.encode(embed.vector('run the tests with pytest -q'))))))")
        outs = set()
        for seed in ("1", "2", "random"):
            env = dict(os.environ, PYTHONHASHSEED=seed, PYTHONPATH=str(ROOT))
            outs.add(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                    env=env, check=True).stdout)
        self.assertEqual(len(outs), 1)
        self.assertEqual(len(json.loads(outs.pop())), embed.DIMENSIONS)

    def test_cosine_orders_by_meaning_of_words(self):
        q = embed.vector("how do we run the tests")
        near = embed.vector("Ran the test suite with pytest -q; tests passed")
        far = embed.vector("Deployed the blog to production with rsync")
        self.assertGreater(embed.cosine(q, near), embed.cosine(q, far))
        self.assertAlmostEqual(embed.cosine(near, near), 1.0)
        self.assertEqual(embed.cosine(embed.vector(""), near), 0.0)

    def test_encoding_is_compact_and_keeps_cosine(self):
        a = embed.vector("the migration failed: column users.email already exists")
        b = embed.vector("migration error: duplicate column email on users")
        blob_a, blob_b = embed.encode(a), embed.encode(b)
        self.assertEqual(len(blob_a), 2 * sum(1 for v in embed.decode(blob_a) if v))  # (dimension, value) pairs
        self.assertLess(len(blob_a), 40)
        self.assertAlmostEqual(embed.cosine(blob_a, blob_b), embed.cosine(a, b), delta=0.02)

    def test_a_vector_stored_whole_reads_as_its_pairs(self):
        # Vectors stored before the pairs are 256 signed bytes; a text touching more than
        # SPARSE_MOST dimensions is still stored so. Both read as the same vector and cosine.
        import random
        rng = random.Random(11)
        texts = ["run the tests with pytest -q", "", "the migration failed: column users.email already exists"]
        texts += [" ".join(f"w{rng.randrange(3000)}" for _ in range(rng.randrange(1, 300))) for _ in range(200)]
        queries = [embed.unit_of(t) for t in ("run the tests", "w17 w2048 w3", "migration email column")]
        whole = 0
        for text in texts:
            blob = embed.encoded(text)
            dense = embed.decode(blob)
            old = dense.tobytes() if any(dense) else bytes(embed.DIMENSIONS)   # as stored before the pairs
            self.assertEqual(len(dense), embed.DIMENSIONS)
            self.assertEqual(embed.decode(old), dense)
            self.assertEqual(embed.unit(old), embed.unit(blob))
            for q in queries:
                self.assertEqual(embed.stored_cosine(q, old), embed.stored_cosine(q, blob))
            nonzero = sum(1 for v in dense if v)
            self.assertEqual(len(blob), embed.DIMENSIONS if nonzero > embed.SPARSE_MOST else 2 * nonzero, text)
            whole += len(blob) == embed.DIMENSIONS
        self.assertGreater(whole, 10)   # both forms were tried

    def test_stored_bytes_are_the_contract(self):
        # A stored vector is read by every later version: these bytes must not change silently.
        text = "run the tests with pytest -q"
        blob = embed.encode(embed.vector(text))
        self.assertEqual({i: v for i, v in enumerate(embed.decode(blob)) if v},
                         {40: -64, 62: -64, 147: 127, 213: 127, 237: 127})
        for text in (text, "", "the", "Running testCases and the_tests; running again, again and again",
                     "migration error: duplicate column email on users " * 3):
            self.assertEqual(embed.encoded(text), embed.encode(embed.vector(text)))

    def test_encoded_is_the_encoding_of_the_vector_to_the_last_bit(self):
        import random
        rng = random.Random(7)
        words = "the test tests testing run failed error key pytest npm cancel x y z 0 42".split()
        texts = [" ".join(f"w{i * j % 97}" for j in range(i % 40)) for i in range(400)]
        texts += [" ".join(rng.choice(words) for _ in range(rng.randint(0, 14))) for _ in range(3000)]
        for text in texts:
            self.assertEqual(embed.encoded(text), embed.encode(embed.vector(text)), text)

    def test_unit_of_a_text_is_the_unit_of_its_vector_to_the_last_bit(self):
        texts = ["", "the", "run the tests with pytest -q", "fail fail fail", "a b c d e f g h",
                 "Running testCases and the_tests; running again, again and again"]
        texts += [" ".join(f"w{i * j % 97}" for j in range(i % 40)) for i in range(400)]
        cancelled = 0
        for text in texts:
            self.assertEqual(list(embed.unit_of(text).items()), list(embed.unit(embed.vector(text)).items()), text)
            cancelled += any(x == 0.0 for x in embed._normalised(text).values())
        self.assertGreater(cancelled, 0)  # a dimension two words cancel out is left out by both

    def test_a_vector_against_many_dots_each_to_the_last_bit_and_within_its_bound(self):
        # sleep weighs each surprise against every lesson through Against: its products must be dot's,
        # in dot's order (the vector with fewer components first), or two near lessons could swap
        # places; and a lesson passed over by the bound (most) must be one its cosine could not reach
        import random
        import struct
        rng = random.Random(11)
        texts = [" ".join(f"w{rng.randrange(300)}" for _ in range(rng.randint(0, 60))) for _ in range(120)]
        units = [embed.unit_of(text) for text in texts]
        sums = []
        for _ in range(40):         # lessons: sums of a few units, keys in the order they first came
            total: dict = {}
            for u in rng.sample(units, rng.randint(1, 16)):
                for i, x in u.items():
                    total[i] = total.get(i, 0.0) + x
            sums.append(total)
        for u in units:
            against = embed.Against(u)
            for total in sums + units:
                dense = [total.get(i, 0.0) for i in range(embed.DIMENSIONS)]
                fast, slow = against.dot(total, dense), embed.dot(total, u)
                self.assertEqual(struct.pack("d", fast), struct.pack("d", slow))
                peak = max(map(abs, total.values()), default=0.0)
                self.assertLessEqual(abs(slow), against.most(sum(1 << i for i in total), peak) + 1e-12)

    def test_words_are_stemmed_and_split(self):
        self.assertEqual(embed.words("Running testCases and the_tests"), ["run", "test", "case", "test"])

    def test_words_are_the_runs_of_ascii_letters_and_digits(self):
        import random
        import re
        rng = random.Random(5)
        alphabet = "aZ09_-./ \n\t\x00é✓İıſ\u212a𝔸日本\ud800"
        for _ in range(2000):
            text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
            self.assertEqual([t.decode() for t in embed.tokens(text)], re.findall(r"[A-Za-z0-9]+", text))
