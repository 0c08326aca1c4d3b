"""What a run will cost before it starts (``--dry-run``) and a spending limit while it runs
(``--max-cost``): token counting, image token rules, prices, the estimate and the budget."""
