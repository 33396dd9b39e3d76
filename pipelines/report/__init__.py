"""The report site: `compass report` and the report/site asset write it under var/reports/site/."""
