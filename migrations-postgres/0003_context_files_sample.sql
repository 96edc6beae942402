-- The twin of migrations/0017_context_files_sample.sql.
-- The built-in templates' Context Files sections held a placeholder path
-- (`src/example/file.rs`, `src/example/`) as their sample, copied into every task the
-- template was applied to and then reported as a knowledge gap for each task whose
-- section nobody edited. The sample becomes a comment, which the section's reader
-- skips; sections already copied are read past the old placeholder (domain::graph).
UPDATE template_sections
SET content_sample = '<!-- the files this task reads or changes, one repository-relative path per line -->'
WHERE id = '0192f000-0000-7000-8000-000000000103' AND content_sample = 'src/example/file.rs';
UPDATE template_sections
SET content_sample = '<!-- the paths or globs of the areas this feature touches, one per line -->'
WHERE id = '0192f000-0000-7000-8000-000000000204' AND content_sample = 'src/example/';
