"""The writers (files.py): each writes only its own places, never over a change."""
from tests.helpers import SetupCase


class ConfigWriter(SetupCase):
    def test_the_config_writer_refuses_any_other_path(self):
        from openmemory import files
        for path in (self.claude / "settings.local.json", self.claude / ".claude.json", self.tmp / "crontab",
                     self.claude / "projects" / "x" / "memory" / "MEMORY.md", self.tmp / "xdg" / "systemd" / "x.service"):
            with self.subTest(path=path), self.assertRaises(files.ConfigError):
                files.write_config(path, b"x")
            self.assertFalse(path.exists())
        with self.assertRaises(files.ConfigError):  # changed since read: nothing written
            files.replace_config_if_unchanged(self.settings, b"{}", b'{"x": 1}')
        self.assertEqual(self.settings.read_bytes(), self.original)
