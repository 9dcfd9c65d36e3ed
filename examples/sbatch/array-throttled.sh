#!/bin/bash
#SBATCH --job-name=ckpt-eval
#SBATCH --array=0-9%2                # ten jobs, at most two running
#SBATCH --gpus=1
#SBATCH --cpus-per-task=4
#SBATCH --mem=24000M
#SBATCH --time=45:00                 # minutes:seconds

CKPT=$(sed -n "$(( SLURM_ARRAY_TASK_ID + 1 ))p" /data/eval/checkpoints.txt)
echo "task ${SLURM_ARRAY_TASK_ID} of ${SLURM_ARRAY_TASK_COUNT}: ${CKPT}"
python evaluate.py --checkpoint "$CKPT"
